# Switchboard engine: REST (8080/tcp), SIP (5060/udp+tcp), RTP (20000-29999/udp).
FROM node:20-bookworm-slim AS build
WORKDIR /app
# @discordjs/opus, better-sqlite3, native/rtp-udp and native/dsp build from source.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
COPY native ./native
RUN npm ci --omit=dev --ignore-scripts=false
COPY bin ./bin
COPY src ./src
COPY models ./models
COPY assets ./assets
COPY tsconfig.json ./

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    SWITCHBOARD_DATA_DIR=/data \
    HTTP_HOST=0.0.0.0 HTTP_PORT=8080 \
    SIP_HOST=0.0.0.0 SIP_PORT=5060 \
    RTP_PORT_MIN=20000 RTP_PORT_MAX=29999
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080/tcp 5060/udp 5060/tcp 20000-29999/udp
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--import", "tsx", "src/cli.ts", "serve"]
