/**
 * Records keyed by data (attribute names, --types keys, key values) must answer only for their own
 * keys: on a plain `{}`, `types['constructor']` is Object and `item.__proto__ = v` sets the prototype
 * (a column named `constructor` or `__proto__` would lose its value). These records have no prototype, so every name DynamoDB accepts is an ordinary key.
 */
export function ownRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A prototype-free copy of `sources` merged in order (later wins); own `__proto__` keys included. */
export function mergeOwn<T>(...sources: Array<Readonly<Record<string, T>> | undefined>): Record<string, T> {
  const out = ownRecord<T>();
  for (const source of sources) if (source) for (const name of Object.keys(source)) out[name] = source[name]!;
  return out;
}

/** `record[name]` when the record owns it, otherwise undefined (never an inherited member). */
export function ownValue<T>(record: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** Assigns without ever touching the prototype, even for a field named "__proto__". */
export function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}
