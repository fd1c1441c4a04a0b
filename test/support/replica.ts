export { startStreamingPair, type StreamingPair } from '../../scripts/topology/postgresReplica.ts';
