/**
 * Connections to S3 at once. A striped read keeps one GET open per stripe, each body paused while the other
 * stripes are written: with fewer sockets than stripes, a stripe's GET would wait for a socket that a paused
 * body holds, and the read would stall for good. A striped read of S3 objects keeps its stripes below this.
 *
 * Apart from s3Part.ts so that the stripe planner can read it without loading the S3 client, which a load
 * with no input in S3 never needs (a third of the process's start-up).
 */
export const S3_MAX_SOCKETS = 80;
