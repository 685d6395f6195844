import { cloneElement, useId, type ReactElement, type ReactNode } from 'react';

interface FieldProps {
  label: ReactNode;
  /** The control: an input, select or textarea; it gets the id and the ARIA links. */
  children: ReactElement<{ id?: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }>;
  hint?: ReactNode;
  errors?: readonly string[];
  className?: string;
}

/** A labelled form control with its hint and its errors announced with it. */
export function Field({ label, children, hint, errors, className }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const hasErrors = Boolean(errors && errors.length > 0);
  const describedBy = [hint ? hintId : '', hasErrors ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${hasErrors ? 'field--invalid' : ''} ${className ?? ''}`}>
      <label className="field__label" htmlFor={id}>
        {label}
      </label>
      {cloneElement(children, {
        id,
        'aria-describedby': describedBy,
        'aria-invalid': hasErrors || undefined,
      })}
      {hint && (
        <p className="field__hint" id={hintId}>
          {hint}
        </p>
      )}
      {hasErrors && (
        <p className="field__error" id={errorId}>
          {errors!.join(' ')}
        </p>
      )}
    </div>
  );
}
