# One image for all of Brigade: the worker (default command), the API with the web client
# (command: node bin/api.ts), or both in one process (command: node bin/start.ts with DATABASE_URL and
# TEMPORAL_ADDRESS). Node 24 runs the TypeScript sources directly.

# The web client (web/ -> web/dist) needs Vite and React, which the runtime image does not carry.
FROM node:24-bookworm-slim AS web
WORKDIR /app
COPY package.json package-lock.json ./
# stack/web-build.ts is not there yet, so the postinstall build is skipped; it runs below, once, on the sources
RUN npm ci --no-audit --no-fund
COPY web ./web
COPY stack/web-build.ts ./stack/web-build.ts
COPY src/api/web-build-state.ts ./src/api/web-build-state.ts
RUN node stack/web-build.ts && test -f web/dist/index.html

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY bin ./bin
COPY stack ./stack
COPY src ./src
COPY db ./db
COPY prompts ./prompts
# the built client and its stamp (src/api/web-app.ts serves it at /); the sources stay in the build stage
COPY --from=web /app/web/dist ./web/dist

# Bundle the workflows (with Brigade's workflow interceptors, src/telemetry/workflow-interceptors.ts) at
# build time, so a worker starts without running webpack.
RUN node bin/bundle-workflows.ts /app/build/workflow-bundle.js
ENV WORKFLOW_BUNDLE_PATH=/app/build/workflow-bundle.js

# DATA_DIR: local object storage (shared by worker and API through a volume) and the API's dev token.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node

# 3000: the API and the web client; 9464: GET /metrics when METRICS_PORT=9464 (docs/operations.md)
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=5s --retries=3 \
  CMD node -e "const port = process.env.METRICS_PORT || process.env.PORT || 3000; fetch('http://127.0.0.1:' + port + (process.env.METRICS_PORT ? '/metrics' : '/readyz')).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"

CMD ["node", "bin/worker.ts"]
