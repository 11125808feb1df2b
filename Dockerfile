# The configuration service image (docker-compose.yml builds it).
# Build stage: the dependencies (better-sqlite3 is compiled here), the compiled build in dist/,
# then the development dependencies dropped.
FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV SCARF_ANALYTICS=false
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
COPY projections ./projections
COPY console ./console
RUN npm ci && npm prune --omit=dev

# Runtime stage: the compiled build and the production dependencies only, as the unprivileged
# node user; the data in a volume.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/dist/src/cli.js /usr/local/bin/pmacontrol-config
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:8080/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/cli.js", "serve"]
