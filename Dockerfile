# locklab's container image, built from this repository (nothing is
# downloaded when it runs): the lab starts its embedded etcd clusters in its
# own process, and the Redis locks' servers from Debian's redis-server, so
# the image needs the binary and that package.
#   docker build -t locklab .
#   docker run --rm -v "$PWD/locklab-out:/out" locklab run --out /out/run
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/locklab ./cmd/locklab

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends redis-server && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/locklab /usr/local/bin/locklab
WORKDIR /work
ENTRYPOINT ["locklab"]
