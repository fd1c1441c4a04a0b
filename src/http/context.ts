import type { Runtime } from '../context.ts';
import type { ReadReplicas } from '../db/replicas.ts';
import type { Dispatcher } from '../pipeline/dispatcher.ts';
import type { AdmissionStore } from '../store/admission.ts';
import type { Stores } from '../store/stores.ts';
import type { LedgerFanout } from '../ledger/fanout.ts';
import type { StreamSlots } from '../store/streamSlots.ts';
import type { RenderedReads } from './renderedReads.ts';
import type { SseRegistry } from './sse.ts';

/** The process's event streams (built in src/roles/api.ts): the ledger fan-out they join, the open connections, their slots. */
export interface EventStreams {
  fanout: LedgerFanout;
  registry: SseRegistry;
  slots: StreamSlots;
}

/** What the HTTP tier needs to serve a request. */
export interface ApiContext extends Runtime, Stores {
  admission: AdmissionStore;
  dispatcher: Dispatcher;
  /** Where a read runs: a replica that has replayed what the reader must see, else the primary. */
  replicas: ReadReplicas;
  /** Bodies of full reads already rendered, by ETag. */
  renderedReads: RenderedReads;
  streams: EventStreams;
}
