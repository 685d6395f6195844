import { useEffect, useRef, useState } from 'react';
import { Button } from './button';
import { Modal } from './dialog';

/** The keys, as the help dialog lists them. */
export const SHORTCUTS: readonly [keys: string[], what: string][] = [
  [['j'], 'Next row of the table'],
  [['k'], 'Previous row of the table'],
  [['Enter'], 'Open the row (its first link)'],
  [['x'], 'Select or unselect the row'],
  [['?'], 'Show these shortcuts'],
];

/** Whether a key press belongs to what has focus (typing in a field, a control's own keys). */
function typingIn(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) &&
    !(target instanceof HTMLInputElement && target.type === 'checkbox')
  );
}

/** The rows of the screen's list: the first table of `main` (every list is a `DataTable`). */
function listRows(): HTMLTableRowElement[] {
  const table = document.querySelector<HTMLTableElement>('main .table-wrap table');
  return table ? [...table.tBodies].flatMap((body) => [...body.rows]) : [];
}

/** Puts the focus on a row: its first link, else the row itself. */
function focusRow(row: HTMLTableRowElement): void {
  const link = row.querySelector<HTMLElement>('a[href]');
  if (link) link.focus();
  else {
    row.tabIndex = -1;
    row.focus();
  }
  row.scrollIntoView({ block: 'nearest' });
}

/**
 * Keyboard navigation of the screen's table, as mail clients and the peers' dashboards have it:
 * j and k move between rows (the focus goes to the row's first link, so Enter opens it), x ticks
 * the row's checkbox, ? shows the keys. Keys typed into a field, with a modifier, or while a
 * dialog is open are left alone.
 */
export function KeyboardShortcuts() {
  const [open, setOpen] = useState(false);
  const closeRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (typingIn(event.target) || document.querySelector('dialog[open]')) return;
      if (event.key === '?') {
        event.preventDefault();
        setOpen(true);
        return;
      }
      if (!['j', 'k', 'x', 'Enter'].includes(event.key)) return;
      const rows = listRows();
      const current = rows.findIndex((row) => row.contains(document.activeElement));
      if (event.key === 'j' || event.key === 'k') {
        if (rows.length === 0) return;
        event.preventDefault();
        const next =
          current === -1
            ? event.key === 'j'
              ? 0
              : rows.length - 1
            : Math.min(rows.length - 1, Math.max(0, current + (event.key === 'j' ? 1 : -1)));
        focusRow(rows[next]!);
      } else if (current !== -1) {
        const row = rows[current]!;
        if (event.key === 'x') {
          const checkbox = row.querySelector<HTMLInputElement>('input[type="checkbox"]:not(:disabled)');
          if (checkbox) {
            event.preventDefault();
            checkbox.click();
          }
        } else if (document.activeElement === row) {
          // Enter on a row without focus on its link: open that link (a focused link opens itself)
          row.querySelector<HTMLElement>('a[href]')?.click();
        }
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  return (
    <Modal
      open={open}
      title="Keyboard shortcuts"
      onCancel={() => setOpen(false)}
      initialFocus={closeRef}
      testId="shortcuts-dialog"
      actions={
        <Button ref={closeRef} onClick={() => setOpen(false)}>
          Close
        </Button>
      }
    >
      <dl className="shortcuts">
        {SHORTCUTS.map(([keys, what]) => (
          <div key={what}>
            <dt>
              {keys.map((key) => (
                <kbd key={key}>{key}</kbd>
              ))}
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <p className="muted small">Keys typed into a field, or while a dialog is open, are left alone.</p>
    </Modal>
  );
}
