/**
 * StrykerJS 10.1 reads tsconfig files with the JavaScript API of
 * TypeScript <= 6, imported as `typescript` (the core's sandbox tsconfig
 * rewrite, and the TypeScript checker). This repository's typescript@7 is the
 * native compiler and no longer ships that API. The checker itself
 * type-checks mutants with TypeScript 7 (its "experimentalNativePreview"
 * mode: the compiler `npx tsc` runs), which it looks for as
 * `@typescript/native`.
 *
 * So, for imports made by @stryker-mutator packages and only for those:
 * `typescript` is the `typescript6` alias (devDependencies), and
 * `@typescript/native/...` is this repository's own `typescript/...`.
 * stryker.config.mjs imports this file (Stryker's own process) and passes it
 * to the checker processes (checkerNodeArgs).
 */
import { registerHooks } from 'node:module';

const STRYKER = '/node_modules/@stryker-mutator/';
const NATIVE = '@typescript/native/';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (context.parentURL?.includes(STRYKER)) {
      if (specifier === 'typescript') return nextResolve('typescript6', context);
      if (specifier.startsWith(NATIVE)) return nextResolve(`typescript/${specifier.slice(NATIVE.length)}`, context);
    }
    return nextResolve(specifier, context);
  },
});
