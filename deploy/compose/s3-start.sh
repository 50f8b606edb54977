#!/bin/sh
# compose.yaml's S3 store: SeaweedFS with one identity (S3_ACCESS_KEY / S3_SECRET_KEY) and the
# bucket Felis writes to (S3_BUCKET), made once it answers.
set -eu
: "${S3_ACCESS_KEY:?set S3_ACCESS_KEY in .env}" "${S3_SECRET_KEY:?set S3_SECRET_KEY in .env}"
umask 077
cat > /tmp/s3.json <<JSON
{"identities":[{"name":"felis","credentials":[{"accessKey":"${S3_ACCESS_KEY}","secretKey":"${S3_SECRET_KEY}"}],"actions":["Admin","Read","Write","List","Tagging"]}]}
JSON
weed server -dir=/data -s3 -s3.port=8333 -s3.config=/tmp/s3.json &
server=$!
trap 'kill -TERM "$server"; wait "$server"' TERM INT
until echo "s3.bucket.list" | weed shell -master=127.0.0.1:9333 >/dev/null 2>&1; do sleep 1; done
echo "s3.bucket.create -name ${S3_BUCKET}" | weed shell -master=127.0.0.1:9333 || true
wait "$server"
