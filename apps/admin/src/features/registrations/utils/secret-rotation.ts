/** The overlaps the console offers for a secret rotation (the API takes any duration up to 7 days). */
export const OVERLAP_CHOICES = [
  { value: '0m', label: 'None', hint: 'Deliveries carry only the new signature from now on.' },
  { value: '1h', label: '1 hour', hint: 'For a receiver updated within minutes.' },
  { value: '24h', label: '24 hours', hint: 'The default: a day to roll the new secret out.' },
  { value: '7d', label: '7 days', hint: 'The longest the API allows.' },
] as const;

export type OverlapChoice = (typeof OVERLAP_CHOICES)[number]['value'];

/** The overlap offered first: the API's default. */
export const DEFAULT_OVERLAP_CHOICE: OverlapChoice = '24h';
