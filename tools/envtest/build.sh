#!/usr/bin/env bash
# kube-apiserver v1.20.2 + etcd 3.4.23 from Debian bookworm's apt repositories only (no Go proxy, no downloads elsewhere).
set -euo pipefail
W=${K8S_WORK:-/tmp/k8s-envtest}; BIN=${K8S_BIN:-/var/cache/felis-envtest/bin}
mkdir -p "$W/apt/lists/partial" "$W/apt/cache/archives/partial" "$W/debs" "$W/root" "$BIN"
# The machine's own Debian mirror (first URI of its apt sources), with bookworm's source packages.
MIRROR=$( { cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } \
  | grep -E '^(URIs:|deb )' | grep -v security | sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//' | awk '{print $1; exit}' || true)
[ -n "$MIRROR" ] || { echo "no Debian mirror found in the apt sources" >&2; exit 1; }
printf 'deb %s bookworm main\ndeb-src %s bookworm main\n' "$MIRROR" "$MIRROR" > "$W/apt/sources.list"
APT=(-o Dir::Etc::SourceList="$W/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists="$W/apt/lists" -o Dir::Cache="$W/apt/cache")
apt-get "${APT[@]}" -qq update
command -v rsync >/dev/null || { apt-get update -qq && apt-get install -y -qq rsync >/dev/null; }   # k8s make places binaries with rsync
cd "$W/debs"
apt-get "${APT[@]}" -qq download golang-1.19-go golang-1.19-src etcd-server golang-github-modern-go-reflect2-dev
for f in "$W"/debs/*.deb; do dpkg-deb -x "$f" "$W/root"; done   # unpack only: no service start, no system change
cd "$W"
apt-get "${APT[@]}" -qq source --download-only kubernetes 2>/dev/null   # full upstream tree incl. vendor/
rm -rf k8s && dpkg-source -x kubernetes_*.dsc k8s >/dev/null
# vendored reflect2 v1.0.1 segfaults under Go >= 1.18 (jsoniter map encoding); use Debian's v1.0.2
R=k8s/vendor/github.com/modern-go/reflect2
rm -rf "$R" && cp -r root/usr/share/gocode/src/github.com/modern-go/reflect2 "$R" && rm -f "$R/go.mod"
printf 'KUBE_GIT_VERSION=v1.20.2\nKUBE_GIT_MAJOR=1\nKUBE_GIT_MINOR=20\n' > "$W/version.env"
export GOROOT="$W/root/usr/lib/go-1.19" PATH="$W/root/usr/lib/go-1.19/bin:$PATH" GOPROXY=off CGO_ENABLED=0 GOFLAGS=-p=2
make -C k8s WHAT=cmd/kube-apiserver KUBE_GIT_VERSION_FILE="$W/version.env"   # runs codegen (openapi) then go build
cp -L k8s/_output/bin/kube-apiserver "$BIN/" && cp root/usr/bin/etcd "$BIN/"
"$BIN/kube-apiserver" --version && "$BIN/etcd" --version | sed -n 1p
