import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_ENTITY_NAMES } from '@platform/shared';
import { useId, useState } from 'react';
import { Button } from '../../../components/ui/button';
import { eventTypeName } from '../../../lib/webhook-states';
import { eventKey } from '../utils/registration-form';

interface EventsPickerProps {
  value: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
  errors?: readonly string[];
}

/**
 * Chooses the (entity, event type) pairs of a registration from the supported entities
 * (docs/webhooks.md#events), one checkbox each, with shortcuts for whole columns.
 */
export function EventsPicker({ value, onChange, errors }: EventsPickerProps) {
  const [filter, setFilter] = useState('');
  const filterId = useId();
  const errorId = useId();
  const shown = WEBHOOK_ENTITY_NAMES.filter((name) =>
    name.toLowerCase().includes(filter.trim().toLowerCase()),
  );

  const toggle = (key: string, on: boolean) => {
    const next = new Set(value);
    if (on) next.add(key);
    else next.delete(key);
    onChange(next);
  };
  const setMany = (keys: string[], on: boolean) => {
    const next = new Set(value);
    for (const key of keys) {
      if (on) next.add(key);
      else next.delete(key);
    }
    onChange(next);
  };
  const column = (type: number) => shown.map((name) => eventKey(name, type));
  const everything = shown.flatMap((name) => SUBSCRIBABLE_EVENT_TYPES.map((type) => eventKey(name, type)));
  const hasErrors = Boolean(errors?.length);

  return (
    <fieldset
      className={`fieldset events-picker ${hasErrors ? 'field--invalid' : ''}`}
      aria-describedby={hasErrors ? errorId : undefined}
      data-testid="events-picker"
    >
      <legend className="fieldset__legend">Events</legend>
      <p className="field__hint">
        The changes delivered to the target. {value.size} of{' '}
        {WEBHOOK_ENTITY_NAMES.length * SUBSCRIBABLE_EVENT_TYPES.length} selected.
      </p>
      {hasErrors && (
        <p className="field__error" id={errorId}>
          {errors!.join(' ')}
        </p>
      )}
      <div className="events-picker__tools">
        <label htmlFor={filterId} className="visually-hidden">
          Filter entities
        </label>
        <input
          id={filterId}
          type="search"
          placeholder="Filter entities…"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
        <Button size="small" onClick={() => setMany(everything, true)}>
          Select all{filter ? ' shown' : ''}
        </Button>
        <Button size="small" onClick={() => setMany(everything, false)}>
          Clear{filter ? ' shown' : ''}
        </Button>
      </div>
      <div className="events-picker__scroll">
        <table className="events-table">
          <thead>
            <tr>
              <th scope="col">Entity</th>
              {SUBSCRIBABLE_EVENT_TYPES.map((type) => {
                const keys = column(type);
                const all = keys.length > 0 && keys.every((key) => value.has(key));
                return (
                  <th scope="col" key={type}>
                    <label className="events-table__column">
                      <input
                        type="checkbox"
                        checked={all}
                        onChange={(e) => setMany(keys, e.target.checked)}
                        aria-label={`Every ${eventTypeName(type)} event${filter ? ' shown' : ''}`}
                      />
                      {eventTypeName(type)}
                    </label>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {shown.map((name) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                {SUBSCRIBABLE_EVENT_TYPES.map((type) => {
                  const key = eventKey(name, type);
                  return (
                    <td key={type}>
                      <input
                        type="checkbox"
                        checked={value.has(key)}
                        onChange={(e) => toggle(key, e.target.checked)}
                        aria-label={`${name} ${eventTypeName(type)}`}
                      />
                    </td>
                  );
                })}
              </tr>
            ))}
            {shown.length === 0 && (
              <tr>
                <td colSpan={4} className="muted">
                  No entity matches “{filter}”.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </fieldset>
  );
}
