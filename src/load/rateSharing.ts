import type { RateController } from '../pacing/rateControl.js';
import type { S3Access } from '../reading/s3Part.js';
import type { Segment } from './segment.js';
import { parseWorkerDoc, SILENT_AFTER_MS } from './loadStatus.js';
import { nextTarget } from './sharedRate.js';
import { localWorkerStore, s3WorkerStore, workerDocPath, type WorkerBoard, type WorkerDoc } from './workerBoard.js';

export interface RateSharing {
  /** --total-wcu: the budget of every worker together. */
  total: number;
  controller: RateController;
  /** The controller's clock. */
  now: () => number;
  segment: Segment;
  listing: string;
  listedAt: string;
  s3: () => Promise<S3Access>;
  /** The board's beat: how soon the others see this worker and make room. */
  beatMs: number;
  /** How long a peer may be unheard before its part is taken: SILENT_AFTER_MS, as status waits (tests shorten it). */
  silentMs?: number;
}

/** Beats a worker that joined with no room waits for the others to make it, before it writes at all. */
const JOIN_BEATS = 5;

/**
 * Makes this worker's target its part of the shared budget (sharedRate.ts), from the other workers' states
 * beside the listing: now, before its first write (it joins with what the others leave free), and at every
 * beat of its board after it writes its own. A state that cannot be read counts as a worker not running:
 * its part goes to the others only once it has been silent as long as status waits (SILENT_AFTER_MS).
 */
export async function shareTheRate(board: WorkerBoard, sharing: RateSharing): Promise<void> {
  const { controller, now, segment, listing, listedAt, total } = sharing;
  const silentMs = sharing.silentMs ?? SILENT_AFTER_MS;
  const peers = Array.from({ length: segment.count }, (_, index) => index)
    .filter((index) => index !== segment.index)
    .map((index) => {
      const path = workerDocPath(listing, { index, count: segment.count });
      return { store: path.startsWith('s3://') ? s3WorkerStore(path, sharing.s3) : localWorkerStore(path), segment: `${index}/${segment.count}` };
    });
  // Undefined while joining: nothing of the budget is this worker's until it has seen the others.
  let mine: number | undefined;
  // An equal part among the live workers at the last beat: what this worker is owed.
  let owed = total / segment.count;
  board.rate = () => (mine === undefined ? undefined : { targetWcu: mine, achievedWcu: controller.snapshot(now()).achievedWcu });
  // A peer's last document read: a read that fails (S3 unreachable for a moment) keeps it, rather than
  // counting the peer as gone and taking its part while it may still be writing.
  const known = new Map<string, WorkerDoc | undefined>();
  // A peer whose state is there but could not be read, never read before (unreadable from the first look,
  // or made so before this worker first read it): not known not to run. Since when, by this worker's clock:
  // it keeps its part of N until silent as long as any unheard peer (taken at once, the table went to 1.5x).
  const unreadableSince = new Map<string, number>();
  const heard = new Map<string, Heard>();
  let first = true;
  // When this worker's document last changed (its board's writes that succeeded), by its own clock.
  let writes = board.writes;
  let publishedAt = now();
  const adjust = async () => {
    // Unheard for half the time the others wait (stopped by SIGSTOP or a long pause, or its writes
    // failing): they may have taken its part meanwhile; it must not write at it beside them until they see
    // it again (the table at 1.75x the budget for a second, 1.16x over 10 s).
    const began = now();
    const unheard = began - publishedAt > silentMs / 2;
    if (board.writes !== writes) {
      writes = board.writes;
      publishedAt = began;
    }
    const docs = await Promise.all(
      peers.map(async (p) => {
        const read = await readPeer(p.store, p.segment);
        if (read !== 'unreadable') unreadableSince.delete(p.segment);
        else if (!unreadableSince.has(p.segment)) unreadableSince.set(p.segment, now());
        // A document gone after it was read (a folder emptied, a volume remounted, a 404 from S3) is not a
        // worker not yet started, whose part is free: it ages as an unreadable one does.
        if (read !== 'unreadable' && (read !== undefined || known.get(p.segment) === undefined)) known.set(p.segment, read);
        return known.get(p.segment);
      }),
    );
    const at = now();
    const wall = Date.now();
    const live = docs.filter((d, i): d is WorkerDoc => {
      if (d === undefined) return false;
      const last = heardFrom(heard.get(peers[i]!.segment), d.updatedAt, { at, wall, first });
      heard.set(peers[i]!.segment, last);
      return d.listedAt === listedAt && d.state === 'running' && at - last.at <= silentMs;
    });
    first = false;
    const unreadable = peers.filter((p) => {
      const since = unreadableSince.get(p.segment);
      return known.get(p.segment) === undefined && since !== undefined && at - since <= silentMs;
    }).length;
    owed = total / (live.length + unreadable + 1);
    // A worker still joining has published no target yet: it may take up to one part of N; so may one whose
    // state cannot be read.
    const targets = [...live.map((d) => d.targetWcu ?? total / segment.count), ...Array.from({ length: unreadable }, () => total / segment.count)];
    const next = nextTarget(total, mine, targets, segment.count);
    // Never more while unheard: the others may be as unheard (their state beside the listing unwritable, S3
    // unreachable), each then taking the silent others' parts, the table at N times the budget.
    mine = unheard && mine !== undefined ? Math.min(mine, next) : next;
    // An on-demand table's growth was divided as the budget was, 1/N each: this worker's part of it follows its part of the budget.
    if (Math.abs(mine - controller.targetWcu) > 0.01) controller.setTarget(now(), mine, (mine * segment.count) / total);
    // Unheard while the others took its part: they give it back once they see it again, at their next
    // beat; until then it sends nothing more (at its least part instead, its sends would be reserved
    // seconds apart, and kept so after the room came back).
    if (unheard && total - targets.reduce((sum, t) => sum + t, 0) < mine) controller.hold(now(), 1.5 * sharing.beatMs);
  };
  await adjust();
  board.onBeat = adjust;
  // Published at once, so the others make room at their next beat.
  await board.refresh();
  // Joined with no room (the others took the part of a worker that had not started, or of this one before a
  // restart): wait a few beats for them to give it back rather than write at the least part, whose waits
  // (a batch of 25 units at 2% of a part: seconds each) would be reserved before the room came.
  for (let beat = 0; beat < JOIN_BEATS && mine! < 0.9 * Math.min(owed, total / segment.count); beat++) {
    await new Promise((resolve) => setTimeout(resolve, sharing.beatMs));
    await adjust();
    await board.refresh();
  }
}

/** When this worker last heard from a peer: the updatedAt its document said, and when (this worker's monotonic clock) that was first read. */
export interface Heard {
  updatedAt: string;
  at: number;
}

/**
 * When a peer was last heard from, by this worker's own monotonic clock, never by the peer's: a document
 * whose updatedAt changed since the last read was written since then, whatever the two clocks say (a
 * peer's clock 60 s behind made it look silent while it wrote at its part, the table at 1.5x the budget;
 * one ahead kept a killed peer's part from the others for as long). Only a document already there when
 * this worker joins is dated by its updatedAt, and only to make it older, never newer than now: the state
 * of a worker killed long before is not heard for another SILENT_AFTER_MS, and a peer whose clock is behind
 * is heard again at its next beat (meanwhile a joining worker takes no more than one part of N). Pure.
 */
export function heardFrom(last: Heard | undefined, updatedAt: string, now: { at: number; wall: number; first: boolean }): Heard {
  if (last?.updatedAt === updatedAt) return last;
  const age = now.first && last === undefined ? Math.max(0, now.wall - Date.parse(updatedAt)) : 0;
  return { updatedAt, at: now.at - age };
}

/** A peer's document; undefined when it has none yet (not started); 'unreadable' when it could not be read. */
async function readPeer(store: { read(): Promise<string | undefined>; where: string }, segment: string): Promise<WorkerDoc | undefined | 'unreadable'> {
  try {
    const text = await store.read();
    return text === undefined ? undefined : parseWorkerDoc(text, store.where, segment);
  } catch {
    return 'unreadable';
  }
}
