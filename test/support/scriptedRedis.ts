import type { Redis } from 'ioredis';

/**
 * A stand-in for the Redis of a store that only runs defined commands
 * (Lua scripts): it records each call's KEYS and ARGV, split by the command's
 * numberOfKeys as ioredis does, and answers `reply`. For the TypeScript half
 * of a store; the scripts themselves run against a real Redis elsewhere.
 */
export function scriptedRedis(reply: unknown[]): { redis: Redis; calls: { command: string; keys: unknown[]; argv: unknown[] }[] } {
  const calls: { command: string; keys: unknown[]; argv: unknown[] }[] = [];
  const redis: Record<string, unknown> = {
    defineCommand(name: string, definition: { numberOfKeys: number; lua: string }) {
      redis[name] = async (...args: unknown[]) => {
        calls.push({ command: name, keys: args.slice(0, definition.numberOfKeys), argv: args.slice(definition.numberOfKeys) });
        return reply;
      };
    },
  };
  return { redis: redis as unknown as Redis, calls };
}
