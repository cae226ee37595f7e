# One image for both parts of Brigade: the worker (default command) and the API
# (command: node src/api-main.ts). Node 24 runs the TypeScript sources directly.
FROM node:24-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production

COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY src ./src
COPY db ./db
COPY prompts ./prompts

# Bundle the workflows at build time so a worker starts without running webpack.
RUN node src/stack/bundle-workflows-main.ts /app/build/workflow-bundle.js
ENV WORKFLOW_BUNDLE_PATH=/app/build/workflow-bundle.js

# DATA_DIR: local object storage (shared by worker and API through a volume) and the API's dev token.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node

CMD ["node", "src/worker-main.ts"]
