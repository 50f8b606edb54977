# syntax=docker/dockerfile:1
# Felis control plane: `docker build -t felis .`, then
# `docker run -p 8080:8080 -p 8081:8081 -e SERVICE_TOKEN_PROXY=… felis`.

# Node 24 LTS, the same major as the `node` devDependency that runs the scripts and the tests,
# pinned by the digest of the tag's multi-platform index (linux/amd64 and arm64 under one digest),
# so a rebuilt tag never changes the image under a given commit. The digest is the one published for
# node:24.21.0-bookworm-slim; this project's build machines reach no registry, so re-check it where
# one is reachable, and when moving to a newer 24.x, with
#   docker buildx imagetools inspect node:24.21.0-bookworm-slim --format '{{json .Manifest.Digest}}'
ARG NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:2fe369e969550cde8e867afc3fe370b260140cab4a23d467074295b42163d553
# pg_dump refuses a server of a newer major than itself: set this to your PostgreSQL's major
# (14 to 18; PGDG's client of that major is installed, older servers are dumped by newer clients).
ARG PG_MAJOR=17

# 1. Compile the TypeScript sources to dist/ with the full (dev) dependency set.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# 2. Production dependencies only: no compiler, test runner, Bun or bench tools in the image.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. The runtime: node on the built output. drizzle/ sits beside dist/ (the migrator looks for it
# from dist/db upwards) and is applied at start-up.
FROM ${NODE_IMAGE} AS runtime
ARG NODE_IMAGE
ARG PG_MAJOR
ARG VERSION=4.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="felis-control-plane" \
      org.opencontainers.image.description="Felis control plane: runs Minecraft servers as Kubernetes workloads" \
      org.opencontainers.image.source="https://github.com/FelisMC/Felis" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    EXTERNAL_PORT=8080 \
    INTERNAL_PORT=8081 \
    DATA_DIR=/var/lib/felis
WORKDIR /app
# pg_dump and pg_restore of PG_MAJOR for the database backup commands (dist/cli/db-backup.js,
# db-restore.js), from the PostgreSQL project's apt repository (Debian 12's own client is 15's).
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates postgresql-common \
    && /usr/share/postgresql-common/pgdg/apt.postgresql.org.sh -y \
    && apt-get install -y --no-install-recommends "postgresql-client-${PG_MAJOR}" \
    && pg_dump --version | grep -q " ${PG_MAJOR}\." \
    && rm -rf /var/lib/apt/lists/*
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY drizzle ./drizzle
# The operator's command: `docker exec … felis --help` (bin/felis.mjs runs dist/cli/felis.js).
COPY bin/felis.mjs bin/stale.mjs ./bin/
RUN ln -s /app/bin/felis.mjs /usr/local/bin/felis
# The embedded database (when DATABASE_URL is unset) lives in DATA_DIR: the one writable place.
RUN mkdir -p /var/lib/felis && chown 1000:1000 /var/lib/felis
# Declared, so that a `docker run` without -v still keeps it out of the container's writable layer
# (an anonymous volume) and an operator sees where the state is (`docker inspect`).
VOLUME ["/var/lib/felis"]
# Numeric, so that Kubernetes' runAsNonRoot can verify it (the image's `node` user is 1000).
USER 1000:1000
EXPOSE 8080 8081
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.INTERNAL_PORT||8081)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=16", "--liftoff-only", "dist/main.js"]
