import { useEffect, useId, useRef, type ReactNode, type RefObject } from 'react';
import { Button, type ButtonVariant } from './button';

interface ModalProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  /** The buttons at the bottom (or none: the children bring their own `.dialog__actions`). */
  actions?: ReactNode;
  /** Escape (unless `busy`): the caller closes the dialog through its state. */
  onCancel: () => void;
  /** Something runs that must not be cancelled: Escape does nothing. */
  busy?: boolean;
  /** Where focus starts when it opens (the safe choice); the dialog itself otherwise. */
  initialFocus?: RefObject<HTMLElement | null>;
  testId?: string;
}

/**
 * A modal dialog on the native `<dialog>`: the browser traps focus, Escape cancels, and the rest
 * of the page is inert. Focus starts on `initialFocus` and returns to the element that opened
 * the dialog when it closes.
 */
export function Modal({
  open,
  title,
  children,
  actions,
  onCancel,
  busy = false,
  initialFocus,
  testId,
}: ModalProps) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const openerRef = useRef<Element | null>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      openerRef.current = document.activeElement;
      dialog.showModal();
      initialFocus?.current?.focus();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open, initialFocus]);

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
      data-testid={testId}
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
      {actions && <div className="dialog__actions">{actions}</div>}
    </dialog>
  );
}

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  confirmVariant?: ButtonVariant;
  /** The confirmed operation is running: the dialog stays open and its buttons wait. */
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/** A modal confirmation (`Modal`): Cancel, where focus starts (the safe choice), and the action. */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  confirmVariant = 'primary',
  busy = false,
  onConfirm,
  onCancel,
}: ConfirmDialogProps) {
  const cancelRef = useRef<HTMLButtonElement>(null);
  return (
    <Modal
      open={open}
      title={title}
      busy={busy}
      onCancel={onCancel}
      initialFocus={cancelRef}
      actions={
        <>
          <Button ref={cancelRef} onClick={onCancel} disabled={busy}>
            Cancel
          </Button>
          <Button variant={confirmVariant} onClick={onConfirm} busy={busy}>
            {confirmLabel}
          </Button>
        </>
      }
    >
      {children}
    </Modal>
  );
}
