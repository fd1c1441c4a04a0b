import { PluginKind, declareClassPlugin } from '@stryker-mutator/api/plugin';

/**
 * Lua sent to Redis lives in TypeScript template strings (src/store/
 * rateLimiter.ts, admission.ts). Stryker mutates JavaScript, not Lua: its
 * only mutant there would empty the whole script, which says nothing about
 * the token bucket or the claim inside it. Those run against a real Redis in
 * test/store/rateLimiter.property.test.ts (the bucket against a reference
 * model), test/http/rateLimits.test.ts and retryKeys.test.ts, outside the
 * mutation run. Such strings are reported as ignored, not counted in the score.
 */
const LUA = /\bredis\.call\(|\btostring\(|^\s*local\s/m;

class LuaScriptIgnorer {
  shouldIgnore(path) {
    if (path.isTemplateLiteral() && path.node.quasis.some((quasi) => LUA.test(quasi.value.raw))) {
      return 'Lua script sent to Redis: not JavaScript Stryker can mutate; exercised against a real Redis in test/store/rateLimiter.property.test.ts, test/http/rateLimits.test.ts and retryKeys.test.ts';
    }
    return undefined;
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Ignore, 'lua-script', LuaScriptIgnorer)];
