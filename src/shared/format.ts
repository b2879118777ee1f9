/**
 * How numbers, durations and user data read in messages for people: one place, so the summary, the
 * estimate, the progress lines and the notes all say "1,234", "12.5 WCU/s" and "4 min 10 s" alike.
 * Machine formats (JSON fields, the JSON log) keep plain numbers and do not use these. Pure.
 */

// ---------------------------------------------------------------------------------------------------
// Numbers

/**
 * A count, rounded, with thousands separators: "1,234,567"; with a noun, the noun in the number it
 * needs: "1 row", "2 rows", "1 batch", "3 batches", "1 query", "0 entries". Every message that counts
 * things says it through here, so none reads "1 partitions" or "read 1 rows".
 */
export function formatCount(value: number, noun?: string): string {
  const count = groupedInteger(Math.round(value));
  return noun === undefined ? count : `${count} ${Math.round(value) === 1 ? noun : plural(noun)}`;
}

/**
 * toLocaleString('en-US') of an integer, without it where it is plain digits: the first toLocaleString of
 * a process sets up ICU's number formatting (~30 ms of CPU), which the option table's help texts would
 * otherwise pay at every start, before anything is read. -0, infinities, NaN and integers past 2^53 keep
 * toLocaleString's own spelling ("-0", "∞", every digit).
 */
function groupedInteger(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** English plural of a (regular) noun: batch → batches, query → queries, key → keys, row → rows. */
export function plural(noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(noun)) return `${noun}es`;
  return `${noun}s`;
}

/** Rates (WCU/s) and capacities: whole numbers stay whole, fractional ones keep one decimal ("0.4", "12.5"). */
export function formatRate(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 1 });
}

/** A share (0..1) as a percent with one decimal; a share too small to show says so rather than "0.0%". */
export function formatPercent(share: number): string {
  if (share > 0 && share < 0.0005) return '<0.1%';
  return `${(share * 100).toFixed(1)}%`;
}

/** Binary units as DynamoDB counts them (1 KB = 1,024 bytes): "812 B", "1.5 KB", "64.0 MB". */
export function formatBytes(value: number): string {
  if (value < 1024) return `${formatCount(value)} B`;
  let scaled = value;
  let unit = 'B';
  for (const u of ['KB', 'MB', 'GB', 'TB']) {
    if (scaled < 1024) break;
    scaled /= 1024;
    unit = u;
  }
  return `${scaled.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} ${unit}`;
}

/** Dollars to the cent; an amount below half a cent says so rather than reading "$0.00". */
export function formatMoney(value: number): string {
  if (value > 0 && value < 0.005) return '< $0.01';
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** Unit prices are fractions of a cent ($0.00065 per WCU-hour): all their digits, up to six. */
export function formatPrice(value: number): string {
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

const pad2 = (value: number) => String(value).padStart(2, '0');

/**
 * Durations for people: "12.3 s" under a minute, "4 min 10 s" under an hour, "2 h 05 min" above. Rounds
 * before choosing the form, so 59.97 s reads "1 min 00 s", not "60.0 s".
 */
export function formatDuration(seconds: number): string {
  if (Number.isNaN(seconds)) return 'unknown';
  if (seconds === Infinity) return 'never';
  const s = Math.max(0, seconds);
  if (Math.round(s * 10) < 600) return `${(Math.round(s * 10) / 10).toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${pad2(whole % 60)} s`;
  const minutes = Math.round(s / 60);
  return `${formatCount(Math.floor(minutes / 60))} h ${pad2(minutes % 60)} min`;
}

// ---------------------------------------------------------------------------------------------------
// User data: escaped for the terminal, cut short, hidden under --no-excerpts

/** What a partition key value becomes in the estimate (text and JSON) under --no-excerpts. */
export const HIDDEN = '(hidden)';

/** What a partition key value becomes in the load summary under --no-excerpts. */
export const HIDDEN_KEY = '(key hidden by --no-excerpts)';

/** A partition key value in the load summary: quoted, or hidden under --no-excerpts (key values can be customer data). */
export function shownKey(key: string, excerpts: boolean): string {
  return excerpts ? JSON.stringify(key) : HIDDEN_KEY;
}

/**
 * Control characters (C0, DEL, C1) and bidirectional overrides as \u escapes: a key value or a path is
 * data, and must not move the cursor, change colours or reorder the line it is printed on.
 */
export function escapeControl(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A raw input row on one line (line breaks as ⏎), cut to 100 characters: the excerpt a rejected row's note shows. */
export function rowExcerpt(raw: string): string {
  const oneLine = raw.replace(/\r?\n/g, '⏎');
  return oneLine.length > 100 ? `${oneLine.slice(0, 97)}...` : oneLine;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Hides every one of `keys` (partition key values) inside free text (advice sentences, the rate's reason,
 * shard flags): producers write those sentences and may quote a key in them. A value is replaced where it
 * stands as a word (between spaces, quotes, brackets or end punctuation), so the key "1" does not eat the
 * digit of "1,000 WCU"; hiding a word that happened to equal a key is the safe mistake.
 */
export function keyRedactor(keys: Iterable<string>): (text: string) => string {
  const words = new Set(keys);
  words.delete('');
  if (words.size === 0) return (text) => text;
  // Longest first, so a sharded value ("cust-7#2") goes whole before its base key ("cust-7") is tried.
  const alternatives = [...words].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const pattern = new RegExp(`(^|[\\s"'\`(\\[=])(?:${alternatives.join('|')})(?=$|[\\s"'\`)\\]]|[.,;:!?](?:\\s|$))`, 'g');
  return (text) => text.replace(pattern, (_match, before: string) => `${before}${HIDDEN}`);
}
