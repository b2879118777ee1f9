/**
 * One budget (--total-wcu) shared by the workers of a load that are running, handed on as they start and
 * finish, pure. Each worker publishes its target (workerBoard.ts) and, at every beat, reads the others'
 * and takes its part: an equal part of the budget among the live workers, as AWS's Bulk Executor shares one
 * rate between Glue executors through S3.
 *
 * Equal parts rather than parts by each worker's demand: the rate a worker achieved is no measure of what it
 * could use (nothing while it reads its first rows, or between two batches), and parts by it swung from
 * beat to beat in tests. A worker held back by its keys or its input therefore leaves some of its part unused.
 *
 * The sum of the targets published stays within the budget: a worker lowers its target at once, and
 * raises it only into what the others' published targets leave free; it joins with at most the part of one
 * of N, so N workers started at once take the budget between them. A worker that joins late starts small
 * and grows as the others, seeing it, make room at their next beat; a worker that finishes or goes silent
 * frees its part for the others' next beat.
 */

/**
 * The least part of the budget a live worker is given, also when it joins, as a share of the budget
 * divided by the count of workers: the only way over the budget, by 2% with every worker at its least.
 */
export const MIN_SHARE = 0.02;

/**
 * This worker's next target: `mine` its published target (undefined when it joins: nothing of the budget
 * is its own yet); `peers` the targets the other live workers (running, heard lately) published; `workers`
 * the N of --segment i/N.
 */
export function nextTarget(total: number, mine: number | undefined, peers: readonly number[], workers: number): number {
  const floor = (MIN_SHARE * total) / workers;
  // Joining, no more than the part of one of N: workers started together cannot yet see each other, and
  // the ones not yet heard from may be about to take theirs.
  const part = mine === undefined ? Math.min(total / workers, total / (peers.length + 1)) : total / (peers.length + 1);
  if (mine !== undefined && part <= mine) return Math.max(floor, part);
  const free = total - peers.reduce((sum, target) => sum + target, 0);
  return Math.max(floor, Math.min(part, Math.max(mine ?? 0, free)));
}
