import { useEffect, useId, useRef, type ReactNode } from 'react';
import { Button, type ButtonVariant } from './button';

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  /** The confirm button's label; without one the dialog only informs and has a single close button. */
  confirmLabel?: string;
  confirmVariant?: ButtonVariant;
  /** The confirm button waits (e.g. for a count the confirmation depends on). */
  confirmDisabled?: boolean;
  /** The cancel button's label: `Cancel` unless said otherwise (`Close` once nothing is left to confirm). */
  cancelLabel?: string;
  /** The confirmed operation is running: the dialog stays open and its buttons wait. */
  busy?: boolean;
  onConfirm?: () => void;
  onCancel: () => void;
}

/**
 * A modal confirmation on the native `<dialog>`: the browser traps focus, Escape cancels, and the
 * rest of the page is inert. Focus starts on Cancel (the safe choice) and returns to the element
 * that opened the dialog when it closes.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  confirmVariant = 'primary',
  confirmDisabled = false,
  cancelLabel = 'Cancel',
  busy = false,
  onConfirm,
  onCancel,
}: ConfirmDialogProps) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const openerRef = useRef<Element | null>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      openerRef.current = document.activeElement;
      dialog.showModal();
      cancelRef.current?.focus();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open]);

  useEffect(() => {
    if (open) return;
    const opener = openerRef.current;
    openerRef.current = null;
    if (opener instanceof HTMLElement && opener.isConnected && !opener.matches(':disabled')) opener.focus();
    // the opener went away or was disabled by the outcome: keep focus in the page, not on <body>
    else if (opener) document.getElementById('main')?.focus();
  }, [open]);

  return (
    <dialog
      ref={dialogRef}
      className="dialog"
      aria-labelledby={titleId}
      aria-describedby={children ? bodyId : undefined}
      onCancel={(event) => {
        // Escape: close through the state, so React stays the source of truth
        event.preventDefault();
        if (!busy) onCancel();
      }}
    >
      <h2 id={titleId} className="dialog__title">
        {title}
      </h2>
      {children && (
        <div id={bodyId} className="dialog__body">
          {children}
        </div>
      )}
      <div className="dialog__actions">
        <Button ref={cancelRef} onClick={onCancel} disabled={busy}>
          {cancelLabel}
        </Button>
        {confirmLabel !== undefined && (
          <Button variant={confirmVariant} onClick={onConfirm} busy={busy} disabled={confirmDisabled}>
            {confirmLabel}
          </Button>
        )}
      </div>
    </dialog>
  );
}
