# Node 24 runs the TypeScript sources directly (type stripping): no build step.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# The SDK is a workspace of the lockfile: its manifest must be there for npm ci (the image does not run it).
COPY sdk/package.json ./sdk/package.json
RUN npm ci --omit=dev
COPY config ./config
COPY src ./src
COPY workers ./workers
EXPOSE 8080
# Role: all (default), api or worker. Migrations run on start.
CMD ["node", "src/bin/main.ts", "all"]
