export { RedisCluster } from '../../scripts/topology/redisCluster.ts';
