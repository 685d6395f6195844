import { WEBHOOK_ENTITY_NAMES } from '@platform/shared';
import { useState } from 'react';
import { Button } from '../../../components/ui/button';
import { Field } from '../../../components/ui/field';
import { FilterForm } from '../../../components/ui/filter-form';
import { formatZone, fromLocalInputValue, toLocalInputValue } from '../../../lib/format';
import { WEBHOOK_STATES, webhookStateName } from '../../../lib/webhook-states';
import { useRegistrationOptions } from '../../../lib/registration-options';
import { searchText, SEARCH_MIN, timeRangeProblem, type WebhookFilters } from '../utils/webhook-filters';

interface Draft {
  q: string;
  state: string;
  registrationId: string;
  entityName: string;
  entityId: string;
  createdFrom: string;
  createdTo: string;
}

const toDraft = (filters: WebhookFilters): Draft => ({
  q: filters.q ?? '',
  state: filters.state ? String(filters.state) : '',
  registrationId: filters.registrationId ? String(filters.registrationId) : '',
  entityName: filters.entityName ?? '',
  entityId: filters.entityId ? String(filters.entityId) : '',
  createdFrom: toLocalInputValue(filters.createdFrom),
  createdTo: toLocalInputValue(filters.createdTo),
});

const QUICK_RANGES = [
  { label: 'Last hour', ms: 3_600_000 },
  { label: 'Last 24 hours', ms: 86_400_000 },
  { label: 'Last 7 days', ms: 7 * 86_400_000 },
];

/** The webhooks table's filters; applied on submit, so typing an id does not fire a request per key. */
export function WebhookFiltersForm({
  filters,
  onApply,
}: {
  filters: WebhookFilters;
  onApply: (filters: WebhookFilters) => void;
}) {
  const [draft, setDraft] = useState<Draft>(() => toDraft(filters));
  const [entityIdError, setEntityIdError] = useState<string | undefined>();
  const [searchError, setSearchError] = useState<string | undefined>();
  const registrations = useRegistrationOptions();
  const set = (key: keyof Draft) => (event: { target: { value: string } }) =>
    setDraft((current) => ({ ...current, [key]: event.target.value }));

  const next: WebhookFilters = {
    q: searchText(draft.q),
    state: draft.state ? Number(draft.state) : undefined,
    registrationId: draft.registrationId ? Number(draft.registrationId) : undefined,
    entityName: draft.entityName || undefined,
    entityId: /^[1-9]\d*$/.test(draft.entityId) ? Number(draft.entityId) : undefined,
    createdFrom: fromLocalInputValue(draft.createdFrom),
    createdTo: fromLocalInputValue(draft.createdTo),
    page: 1,
    pageSize: filters.pageSize,
  };
  const rangeProblem = timeRangeProblem(next);

  const searchProblem = () => {
    const problem =
      draft.q.trim() && next.q === undefined
        ? `Search for an id, or at least ${SEARCH_MIN} characters of payload text (200 at most).`
        : undefined;
    setSearchError(problem);
    return problem;
  };
  const submit = () => {
    if (searchProblem()) return;
    if (draft.entityId && next.entityId === undefined) {
      setEntityIdError('An entity id is a whole number from 1.');
      return;
    }
    setEntityIdError(undefined);
    if (!rangeProblem) onApply(next);
  };
  const clear = () => {
    const empty = {
      q: '',
      state: '',
      registrationId: '',
      entityName: '',
      entityId: '',
      createdFrom: '',
      createdTo: '',
    };
    setDraft(empty);
    setEntityIdError(undefined);
    setSearchError(undefined);
    onApply({ page: 1, pageSize: filters.pageSize });
  };
  // a quick range applies at once (with the other fields as they stand), like a link would
  const quickRange = (ms: number) => {
    const createdFrom = new Date(Date.now() - ms).toISOString();
    setDraft((current) => ({ ...current, createdFrom: toLocalInputValue(createdFrom), createdTo: '' }));
    if (searchProblem()) return;
    if (draft.entityId && next.entityId === undefined) {
      setEntityIdError('An entity id is a whole number from 1.');
      return;
    }
    setEntityIdError(undefined);
    onApply({ ...next, createdFrom, createdTo: undefined });
  };
  const zone = formatZone(new Date().toISOString());

  return (
    <FilterForm
      label="Filter webhooks"
      onSubmit={submit}
      onClear={clear}
      applyDisabled={Boolean(rangeProblem)}
      quick={
        <div className="filters__quick" role="group" aria-label="Quick time ranges (applied at once)">
          {QUICK_RANGES.map((range) => (
            <Button key={range.label} size="small" variant="ghost" onClick={() => quickRange(range.ms)}>
              {range.label}
            </Button>
          ))}
        </div>
      }
    >
      <div className="filters__search">
        <Field
          label="Search"
          hint="Words of the payload or their beginnings (from 3 characters), or a webhook, event (change) or entity id"
          errors={searchError ? [searchError] : undefined}
        >
          <input
            type="search"
            value={draft.q}
            onChange={set('q')}
            name="q"
            placeholder="e.g. Lindenstraße, 4711, a reference from a ticket"
            maxLength={200}
          />
        </Field>
      </div>
      <div className="filters__grid">
        <Field label="State">
          <select value={draft.state} onChange={set('state')} name="state">
            <option value="">Any state</option>
            {WEBHOOK_STATES.map((state) => (
              <option key={state} value={state}>
                {webhookStateName(state)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Registration">
          <select value={draft.registrationId} onChange={set('registrationId')} name="registrationId">
            <option value="">Any registration</option>
            {/* a registration filtered for but not among the options (deleted, or beyond 100) */}
            {draft.registrationId &&
              !registrations.data?.items.some((r) => String(r.id) === draft.registrationId) && (
                <option value={draft.registrationId}>#{draft.registrationId}</option>
              )}
            {registrations.data?.items.map((registration) => (
              <option key={registration.id} value={registration.id}>
                #{registration.id} {registration.targetUrl}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Entity name">
          <select value={draft.entityName} onChange={set('entityName')} name="entityName">
            <option value="">Any entity</option>
            {WEBHOOK_ENTITY_NAMES.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Entity id" errors={entityIdError ? [entityIdError] : undefined}>
          <input
            value={draft.entityId}
            onChange={set('entityId')}
            inputMode="numeric"
            name="entityId"
            placeholder="Any"
          />
        </Field>
        <Field label="Created from" hint={`Your time zone, ${zone}`}>
          <input
            type="datetime-local"
            value={draft.createdFrom}
            onChange={set('createdFrom')}
            name="createdFrom"
          />
        </Field>
        <Field
          label="Created before"
          hint={`Your time zone, ${zone}`}
          errors={rangeProblem ? [rangeProblem] : undefined}
        >
          <input type="datetime-local" value={draft.createdTo} onChange={set('createdTo')} name="createdTo" />
        </Field>
      </div>
    </FilterForm>
  );
}
