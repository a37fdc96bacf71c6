#!/usr/bin/env bats
# kind-config.yaml, the cluster scripts/cluster-up.sh creates: its name, the API server and every port
# mapping on 127.0.0.1 only, one node, and a mapping for every NodePort the chart can render (every
# variant, Locust's web UI on the host's 8089). Both files are read with a YAML parser (PyYAML), the chart
# rendered by helm (the pinned one, scripts/lib/tools.sh).

setup_file() {
  load test_helper
  # shellcheck source=../lib/common.sh
  . "$ROOT/scripts/lib/common.sh"
  # shellcheck source=../lib/tools.sh
  . "$ROOT/scripts/lib/tools.sh"
  use_tools_bin
  ensure_helm >&2
  # Every template that can have a NodePort on: all variants, Locust.
  helm template liveness-lab "$ROOT/chart" --namespace liveness-lab --kube-version "$KUBERNETES_VERSION" \
    --set allVariants=true,locust.enabled=true >"$BATS_FILE_TMPDIR/rendered.yaml"
  use_macos_userland
}

setup() {
  load test_helper
  KIND_CONFIG=$ROOT/kind-config.yaml
}

# kind_config EXPRESSION: a Python expression evaluated on kind-config.yaml (parsed as `c`), printed;
# a list one item a line.
kind_config() {
  python3 -c 'import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
v = eval(sys.argv[2])
print("\n".join(map(str, v)) if isinstance(v, list) else v)' "$KIND_CONFIG" "$1"
}

# mappings: "CONTAINER-PORT HOST-PORT LISTEN-ADDRESS", one line per port mapping of any node.
mappings() {
  kind_config '["%s %s %s" % (m["containerPort"], m.get("hostPort"), m.get("listenAddress", "0.0.0.0"))
    for n in c["nodes"] for m in n.get("extraPortMappings", [])]'
}

# chart_node_ports: every nodePort of every Service the chart renders with every template on.
chart_node_ports() {
  python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Service":
        for p in d["spec"]["ports"]:
            if "nodePort" in p:
                print(p["nodePort"])' "$BATS_FILE_TMPDIR/rendered.yaml"
}

@test "a kind Cluster named liveness-lab, its API server on 127.0.0.1, one control-plane node" {
  run kind_config 'c["kind"], c["name"], c["networking"]["apiServerAddress"]'
  assert_output "('Cluster', 'liveness-lab', '127.0.0.1')"
  run kind_config '[n["role"] for n in c["nodes"]]'
  assert_output control-plane
}

@test "every NodePort the chart renders is mapped to the host" {
  local ports port
  ports=$(chart_node_ports)
  [ -n "$ports" ] || fail "the chart rendered no nodePort"
  run mappings
  assert_success
  for port in $ports; do
    assert_line --regexp "^$port [0-9]+ "
  done
}

@test "every port mapping listens on 127.0.0.1 only" {
  run mappings
  assert_success
  [ -n "$output" ]
  run awk '$3 != "127.0.0.1"' <<<"$output"
  assert_output ""
}

@test "the Locust web UI (NodePort 30089) is on the host's 8089" {
  run mappings
  assert_line "30089 8089 127.0.0.1"
}
