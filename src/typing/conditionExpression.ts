/*
 * A condition expression's names and values checked as DynamoDB would check them, pure: --condition (the load's
 * one condition, load/options.ts) and a row's own (--item-conditions, itemCondition.ts) are refused before any
 * call DynamoDB would refuse. Here, below both, as typing checks a row's condition and writing sends it.
 */

/** How the names and values were given, for the messages: the flags, or a row's own fields. */
export interface ExpressionLabels {
  names: string;
  values: string;
  /** Quote a refused value in the message: the user's own flag's, yes; a row's, no (its contents stay off the terminal under --no-excerpts). */
  quoteValues: boolean;
}

const FLAG_LABELS: ExpressionLabels = { names: '--condition-names', values: '--condition-values', quoteValues: true };

/**
 * Why a condition expression with its names and values cannot be sent, or undefined: DynamoDB would refuse every call
 * (ValidationException, each row then rejected), so the load refuses before its first write. The expression is at
 * most 4 KB; names must start with `#` and values with `:`; each placeholder the expression uses must be given, and
 * each given one used (DynamoDB refuses unused ones); each value is one DynamoDB JSON AttributeValue.
 */
export function expressionProblem(
  expression: string,
  names: Record<string, unknown>,
  values: Record<string, unknown>,
  labels: ExpressionLabels = FLAG_LABELS,
): string | undefined {
  if (expression.trim() === '') return 'the condition expression is empty';
  const bytes = Buffer.byteLength(expression, 'utf8');
  if (bytes > MAX_EXPRESSION_BYTES)
    return `the condition expression is ${bytes.toLocaleString('en-US')} bytes, over DynamoDB's limit of 4 KB (${MAX_EXPRESSION_BYTES.toLocaleString('en-US')} bytes) for any expression`;
  for (const name of Object.keys(names)) {
    if (!/^#[A-Za-z0-9_]+$/.test(name)) return `the name placeholder "${name}" must be # and letters, digits or _`;
    if (typeof names[name] !== 'string' || names[name] === '') return `the name placeholder ${name} must stand for an attribute name (a non-empty string)`;
  }
  for (const name of Object.keys(values)) {
    if (!/^:[A-Za-z0-9_]+$/.test(name)) return `the value placeholder "${name}" must be : and letters, digits or _`;
    const value = values[name];
    const types = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
    if (types.length !== 1 || !ATTRIBUTE_TYPES.has(types[0]!))
      return `the value of ${name} must be one DynamoDB JSON value such as {"S": "open"} or {"N": "3"}${labels.quoteValues ? `, got ${JSON.stringify(value)}` : ''}`;
    const wrong = valueProblem(types[0]!, (value as Record<string, unknown>)[types[0]!]);
    if (wrong !== undefined) return `the value of ${name}${labels.quoteValues ? ` is ${JSON.stringify(value)}, which` : ''} DynamoDB refuses: ${wrong}`;
  }
  const used = (prefix: string) => new Set((expression.match(new RegExp(`${prefix}[A-Za-z0-9_]+`, 'g')) ?? []).map(String));
  for (const [prefix, given, what] of [
    ['#', names, labels.names],
    [':', values, labels.values],
  ] as const) {
    const inExpression = used(prefix);
    for (const token of inExpression) if (!Object.hasOwn(given, token)) return `the expression uses ${token}, which ${what} does not give`;
    for (const token of Object.keys(given))
      if (!inExpression.has(token)) return `${what} gives ${token}, which the expression does not use (DynamoDB refuses that)`;
  }
  return undefined;
}

/** DynamoDB's limit on the length of any expression string, in UTF-8 bytes (Developer Guide, "Constraints": expression parameters). */
const MAX_EXPRESSION_BYTES = 4096;

const ATTRIBUTE_TYPES = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'M', 'L', 'SS', 'NS', 'BS']);

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** What DynamoDB would refuse in a value of `type` (its ValidationException on every call), or undefined; B, BS, M and L are left to it. */
function valueProblem(type: string, inner: unknown): string | undefined {
  const strings = (list: unknown) => Array.isArray(list) && list.length > 0 && list.every((v) => typeof v === 'string');
  switch (type) {
    case 'S':
      return typeof inner === 'string' ? undefined : 'S takes a string';
    case 'N':
      return typeof inner === 'string' && NUMBER.test(inner) ? undefined : 'N takes a number written as a string, such as "3" or "-1.5e3"';
    case 'BOOL':
      return typeof inner === 'boolean' ? undefined : 'BOOL takes true or false';
    case 'NULL':
      return inner === true ? undefined : 'NULL takes true';
    case 'SS':
      return strings(inner) ? undefined : 'SS takes a non-empty list of strings';
    case 'NS':
      return strings(inner) && (inner as string[]).every((v) => NUMBER.test(v)) ? undefined : 'NS takes a non-empty list of numbers written as strings';
    default:
      return undefined;
  }
}
