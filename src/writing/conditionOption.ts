import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/*
 * A load's condition option, apart from the calls it makes (condition.ts): load/options.ts checks it when the
 * CLI starts, which must not load the SDK (test/unit/startupImports.test.ts).
 */

/**
 * A load's write condition (--if-not-exists, --if-newer): each row then goes as one PutItem or DeleteItem
 * with it, as BatchWriteItem takes no conditions.
 */
export type WriteCondition =
  | { kind: 'ifNotExists' }
  | { kind: 'ifNewer'; attribute: string }
  /** --condition with --condition-names and --condition-values: one expression for every row's call. */
  | { kind: 'expression'; expression: string; names: Record<string, string>; values: Record<string, AttributeValue> }
  /** --item-conditions: each row's own condition from its line (PlannedWrite.condition); a row without one is put unconditionally. */
  | { kind: 'item' };

export { expressionProblem } from '../typing/conditionExpression.js';
