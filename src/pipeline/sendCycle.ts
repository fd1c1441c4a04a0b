import type { Queue } from 'bullmq';
import { batchName } from './batchName.ts';
import type { Command, CommandBatch } from './command.ts';
import { captureCommandTrace, enqueueTraced, queueTelemetry, type CommandTrace, type TracedBatch } from '../tracing/queueTracing.ts';

/** Largest batch one job carries. */
const MAX_BATCH = 128;
/** How long commands wait for the batches in flight before being sent anyway. */
const MAX_HOLD_MS = 250;
/** Under load, how long lanes whose batches were answered wait for those still in flight. */
const WAIT_FOR_OTHERS_MS = 50;
/** A cycle smaller than this means no load: lanes send as their own batches are answered, without lingering. */
export const LOADED_BATCH = 8;
/** How many cycles' peaks estimate how many clients there are. */
const PEAK_CYCLES = 4;

interface Waiting {
  command: Command;
  sent: (error?: Error) => void;
  /** The request's trace, with tracing on. */
  trace: CommandTrace | undefined;
}

/**
 * The batches one API instance sends, one lane per partition queue, in
 * cycles. While a batch is in flight, new commands gather and leave together
 * as the next job of their lane. Under light load a command is sent at once
 * (a batch of one); under load every lane sends at the same moment, once
 * all lanes' batches are answered and their clients have come back (at most
 * `lingerMs` later), so the jobs carry every command of the cycle.
 *
 * Why the lanes share one cycle: a client answered by one lane mostly sends
 * its next command to another. With a cycle per lane, half of a lane's
 * clients came back while its next batch was in flight and waited a whole
 * batch, and each job carried half as many commands, paying its queue
 * scripts, its transaction and its commit for half as many
 * (docs/benchmarks.md, seventh round).
 *
 * A lane whose batch is slow (a project blocked, a worker frozen) holds the
 * others at most WAIT_FOR_OTHERS_MS past their own answers; then every lane
 * sends what gathered, the slow one's as a job behind its blocked one. A
 * command waits for batches in flight about MAX_HOLD_MS at most (a linger
 * that starts just before that adds its length).
 *
 * "Loaded" counts a cycle's commands over all lanes: measured at PARTITIONS=2;
 * with many more lanes a cycle of eight ties every lane to the slowest one.
 */
export class SendCycle {
  private readonly lanes: PartitionLane[];
  private readonly lingerMs: number;
  /** Commands sent in the last cycle. */
  private lastSent = 0;
  /**
   * The most commands held at once (gathered or not yet answered) in this
   * cycle and the ones before: under a closed loop, about how many clients
   * there are, since each holds one command unless it is between an answer
   * and its next request.
   */
  private readonly peaks: number[] = [0];
  /** While lingering: how many gathered commands send the cycle at once. */
  private lingerTarget: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = 0;
  /** Closed: answers still arrive (the reply listener settles its waiters), but nothing is sent or timed. */
  private closed = false;

  constructor(queues: Queue[], lingerMs: number) {
    this.lingerMs = lingerMs;
    this.lanes = queues.map((queue) => new PartitionLane(queue, this));
  }

  lane(index: number): PartitionLane | undefined {
    return this.lanes[index];
  }

  private get loaded(): boolean {
    return this.lingerMs > 0 && this.lastSent >= LOADED_BATCH;
  }

  private gathered(): number {
    return this.lanes.reduce((n, lane) => n + lane.waiting, 0);
  }

  private inFlight(): boolean {
    return this.lanes.some((lane) => lane.busy);
  }

  private held(): number {
    return this.lanes.reduce((n, lane) => n + lane.held, 0);
  }

  /** A command joined `lane`. */
  joined(lane: PartitionLane): void {
    this.peaks[0] = Math.max(this.peaks[0] ?? 0, this.held());
    if (this.closed) lane.close();
    else if (this.lingerTarget !== null) {
      if (this.gathered() >= this.lingerTarget) this.send();
    } else if (!this.inFlight()) this.send();
    else if (!this.loaded && !lane.busy) this.sentAlone(lane.sendWaiting());
    else this.sendWithin(MAX_HOLD_MS);
  }

  /** Every command of a lane's batches was answered, timed out or failed to be handed over. */
  answered(): void {
    if (this.closed) return;
    if (this.inFlight()) {
      if (this.loaded) this.sendWithin(WAIT_FOR_OTHERS_MS);
      else for (const idle of this.lanes) if (!idle.busy) this.sentAlone(idle.sendWaiting());
      return;
    }
    if (!this.loaded || this.gathered() >= MAX_BATCH) {
      this.send();
      return;
    }
    // Every client back: as many as were held at the busiest moment lately. The cycle's size on top of those
    // gathered was mostly out of reach, so the linger ran its length; the cycle's size alone fell cycle after
    // cycle, as clients late for one made the next smaller (docs/benchmarks.md, seventh and eighth rounds).
    this.lingerTarget = Math.min(MAX_BATCH, Math.max(...this.peaks));
    this.sendWithin(this.lingerMs, true);
  }

  /** Sends every lane's waiting commands at the latest `ms` from now (`reset`: exactly then). */
  private sendWithin(ms: number, reset = false): void {
    const due = performance.now() + ms;
    if (this.timer && !reset && this.timerDue <= due) return;
    this.stopTimer();
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.send();
    }, ms);
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Every lane sends what waits: the next cycle. */
  private send(): void {
    this.lingerTarget = null;
    this.stopTimer();
    this.sent(this.lanes.reduce((n, lane) => n + lane.sendWaiting(), 0));
    this.peaks.unshift(this.held());
    this.peaks.length = Math.min(this.peaks.length, PEAK_CYCLES);
  }

  /** A cycle sent `count` commands. */
  private sent(count: number): void {
    if (count > 0) this.lastSent = count;
  }

  /** Under light load a lane sent `count` commands on its own: as many as that make a load. */
  private sentAlone(count: number): void {
    this.lastSent = Math.max(this.lastSent, count);
  }

  /** Closing: nothing waiting will be sent now, so its requests are answered with the error at once. */
  close(): void {
    this.closed = true;
    this.stopTimer();
    this.lingerTarget = null;
    for (const lane of this.lanes) lane.close();
  }
}

/** One partition queue's commands: those gathered, and how many of those sent are not answered yet. */
export class PartitionLane {
  private readonly queue: Queue;
  private readonly cycle: SendCycle;
  private buffer: Waiting[] = [];
  private outstanding = 0;
  private sending = false;

  constructor(queue: Queue, cycle: SendCycle) {
    this.queue = queue;
    this.cycle = cycle;
  }

  get waiting(): number {
    return this.buffer.length;
  }

  /** Commands gathered or sent and not answered yet. */
  get held(): number {
    return this.buffer.length + this.outstanding;
  }

  /** A batch of this lane is being handed over or applied. */
  get busy(): boolean {
    return this.sending || this.outstanding > 0;
  }

  submit(command: Command): Promise<void> {
    return new Promise((resolve, reject) => {
      this.buffer.push({ command, sent: (error) => (error ? reject(error) : resolve()), trace: captureCommandTrace() });
      this.cycle.joined(this);
    });
  }

  /** The command's result (or its timeout) came back. */
  settled(): void {
    this.outstanding = Math.max(0, this.outstanding - 1);
    if (!this.busy) this.cycle.answered();
  }

  /** Sends what waits as one job, unless a job of this lane is being handed over; how many it sent. */
  sendWaiting(): number {
    if (this.sending || this.buffer.length === 0) return 0;
    const batch = this.buffer.splice(0, MAX_BATCH);
    void this.send(batch);
    return batch.length;
  }

  private async send(batch: Waiting[]): Promise<void> {
    this.sending = true;
    this.outstanding += batch.length;
    const data: CommandBatch = { commands: batch.map((w) => w.command) };
    try {
      // No custom jobId: BullMQ dedupes by jobId only while the job exists, and a batch must never be
      // dropped because it shares an id with an older one. Duplicates are stopped by processed_command.
      // Named by its projects, so operators' views count a project's backlog without reading job data.
      const name = batchName(batch.map((w) => w.command.partitionKey));
      // Only a batch with a traced request carries traces: the others cost the worker no span.
      if (queueTelemetry() && batch.some((w) => w.trace)) {
        const traces = batch.map((w) => w.trace ?? {});
        await enqueueTraced(traces, () => this.queue.add(name, { ...data, traces } satisfies TracedBatch<CommandBatch>));
      } else await this.queue.add(name, data);
      for (const w of batch) w.sent();
    } catch (error) {
      this.outstanding -= batch.length;
      for (const w of batch) w.sent(error as Error);
    } finally {
      this.sending = false;
      if (!this.busy) this.cycle.answered();
      else if (this.buffer.length > 0) this.cycle.joined(this);
    }
  }

  close(): void {
    for (const waiting of this.buffer.splice(0)) waiting.sent(new Error('the dispatcher is closed'));
  }
}
