import type { Runtime } from '../context.ts';
import type { ReadReplicas } from '../db/replicas.ts';
import type { Dispatcher } from '../pipeline/dispatcher.ts';
import type { AdmissionStore } from '../store/admission.ts';
import type { Stores } from '../store/stores.ts';
import type { RenderedReads } from './renderedReads.ts';

/** What the HTTP tier needs to serve a request. */
export interface ApiContext extends Runtime, Stores {
  admission: AdmissionStore;
  dispatcher: Dispatcher;
  /** Where a read runs: a replica that has replayed what the reader must see, else the primary. */
  replicas: ReadReplicas;
  /** Bodies of full reads already rendered, by ETag. */
  renderedReads: RenderedReads;
}
