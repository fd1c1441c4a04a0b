/** What a global setup hands the tests (`inject`): test/support/globalSetup.ts both, mutationSetup.ts Redis only. */
declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

export {};
