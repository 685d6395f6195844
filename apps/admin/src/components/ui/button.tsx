import type { ComponentProps } from 'react';

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'ghost';

export type ButtonProps = ComponentProps<'button'> & {
  variant?: ButtonVariant;
  size?: 'normal' | 'small';
  /** Shows a busy state and disables the button while an operation runs. */
  busy?: boolean;
};

/** A real `<button>` (type="button" unless said otherwise) in the console's styles. */
export function Button({
  variant = 'secondary',
  size = 'normal',
  busy = false,
  className,
  type = 'button',
  disabled,
  children,
  ...props
}: ButtonProps) {
  const classes = ['button', `button--${variant}`, size === 'small' ? 'button--small' : '', className ?? '']
    .filter(Boolean)
    .join(' ');
  return (
    <button
      type={type}
      className={classes}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...props}
    >
      {busy && <span className="spinner" aria-hidden="true" />}
      {children}
    </button>
  );
}
