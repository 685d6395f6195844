import { useState } from 'react';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { useEventTypes } from '../api/get-event-types';

/**
 * The event catalog (docs/receiving-webhooks.md): each subscribable entity and event with its
 * description, the JSON Schema of its delivery body and an example body, filterable by entity.
 */
export function EventCatalog() {
  const catalog = useEventTypes();
  const [filter, setFilter] = useState('');
  if (catalog.isPending) return <Loading label="Loading the event catalog…" />;
  if (catalog.isError)
    return <ErrorState title="The event catalog could not be loaded" error={catalog.error} />;
  const shown = catalog.data.filter((entry) => entry.key.toLowerCase().includes(filter.trim().toLowerCase()));
  return (
    <section className="event-catalog" data-testid="event-catalog">
      <label className="event-catalog__filter">
        Filter{' '}
        <input
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
          placeholder="Unit, Updated, …"
        />
      </label>
      <p className="muted">
        {shown.length} of {catalog.data.length} event types
      </p>
      {shown.map((entry) => (
        <details key={entry.key} className="event-catalog__entry" data-testid="event-type">
          <summary>
            <code>{entry.key}</code> <span className="muted">{entry.description}</span>
          </summary>
          <h4>Example body</h4>
          <pre className="code-block">{JSON.stringify(entry.example, null, 2)}</pre>
          <h4>JSON Schema</h4>
          <pre className="code-block">{JSON.stringify(entry.schema, null, 2)}</pre>
        </details>
      ))}
    </section>
  );
}
