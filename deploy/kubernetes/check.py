#!/usr/bin/env python3
"""Offline consistency check of deploy/kubernetes/cayley.yaml (needs PyYAML).

Schema validation is done separately (kubernetes-validate); this checks what a
schema cannot: that the objects fit together and fit the image.

    check.py MANIFEST                      # check, print what was checked
    check.py MANIFEST --emit DIR PORT PUZZLE
        # also write DIR/coordinator.cmd and DIR/worker.cmd: the containers'
        # command lines, one word a line, with the listen address and the
        # Service URL replaced by 127.0.0.1:PORT and the puzzle by PUZZLE, so
        # that CI can run exactly these commands in the image on loopback.
"""

import sys
from pathlib import Path

import yaml

IMAGE_USER = 10001  # USER in deploy/Dockerfile
IMAGE_COMMANDS = {"cayley", "cayley-worker", "cayley-serve"}

checks = []


def ok(what):
    checks.append(what)


def fail(what):
    sys.exit(f"check.py: FAILED: {what}")


def need(cond, what):
    if not cond:
        fail(what)
    ok(what)


def arg_after(args, flag):
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def pod_of(job):
    return job["spec"]["template"]["spec"]


def only_container(job):
    containers = pod_of(job)["containers"]
    need(len(containers) == 1, f"{job['metadata']['name']}: one container")
    return containers[0]


def main():
    if len(sys.argv) not in (2, 6) or (len(sys.argv) == 6 and sys.argv[2] != "--emit"):
        sys.exit(__doc__)
    docs = [d for d in yaml.safe_load_all(Path(sys.argv[1]).read_text()) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)

    pvcs = by_kind.get("PersistentVolumeClaim", [])
    need(len(pvcs) == 1, "one PersistentVolumeClaim")
    pvc = pvcs[0]
    need(pvc["spec"]["accessModes"] == ["ReadWriteMany"], "the claim is ReadWriteMany")

    jobs = {j["metadata"]["name"]: j for j in by_kind.get("Job", [])}
    need(set(jobs) == {"cayley-coordinator", "cayley-worker"}, "Jobs cayley-coordinator and cayley-worker")
    coord_job, worker_job = jobs["cayley-coordinator"], jobs["cayley-worker"]
    coord, worker = only_container(coord_job), only_container(worker_job)

    services = by_kind.get("Service", [])
    need(len(services) == 1, "one Service")
    svc = services[0]
    labels = coord_job["spec"]["template"]["metadata"]["labels"]
    selector = svc["spec"]["selector"]
    need(all(labels.get(k) == v for k, v in selector.items()), "the Service selects the coordinator pod")
    worker_labels = worker_job["spec"]["template"]["metadata"]["labels"]
    need(not all(worker_labels.get(k) == v for k, v in selector.items()), "the Service does not select worker pods")

    # The coordinator: image command, listen port = container port = Service target.
    need(coord["command"] == ["cayley-serve"], "the coordinator runs cayley-serve (serve, or resume when a checkpoint exists)")
    cargs = coord["args"]
    listen = arg_after(cargs, "--listen")
    need(listen is not None and listen.startswith("0.0.0.0:"), "the coordinator listens on all pod addresses")
    port = int(listen.rsplit(":", 1)[1])
    ports = {p.get("name"): p["containerPort"] for p in coord["ports"]}
    need(port in ports.values(), "the listen port is the container port")
    sport = svc["spec"]["ports"][0]
    target = sport["targetPort"]
    need(ports.get(target, target) == port, "the Service's targetPort is the listen port")
    probe = coord.get("readinessProbe", {}).get("tcpSocket", {}).get("port")
    need(ports.get(probe, probe) == port, "the readiness probe checks the listen port")

    # The workers dial the Service.
    need(worker["command"] == ["cayley-worker"], "the workers run cayley-worker")
    wargs = worker["args"]
    url = arg_after(wargs, "--coordinator")
    need(url == f"http://{svc['metadata']['name']}:{sport['port']}", "the workers dial the Service name and port")
    spec = worker_job["spec"]
    need(spec.get("completionMode") == "Indexed", "the worker Job is indexed")
    need(spec["completions"] == spec["parallelism"], "all workers run at once (parallelism = completions)")

    # Shared pieces: image, token, volume, user.
    need(coord["image"] == worker["image"], "coordinator and workers use one image")
    for c, job in ((coord, coord_job), (worker, worker_job)):
        name = job["metadata"]["name"]
        token = [e for e in c["env"] if e["name"] == "CAYLEY_TOKEN"]
        need(len(token) == 1 and "secretKeyRef" in token[0].get("valueFrom", {}), f"{name}: CAYLEY_TOKEN from a Secret")
        need("--token" not in c["args"], f"{name}: no token on the command line")
        ref = token[0]["valueFrom"]["secretKeyRef"]
        need((ref["name"], ref["key"]) == ("cayley-token", "token"), f"{name}: the Secret is cayley-token/token, as the README creates it")
        pod = pod_of(job)
        vols = {v["name"]: v for v in pod["volumes"]}
        data = [m for m in c["volumeMounts"] if vols[m["name"]].get("persistentVolumeClaim")]
        need(len(data) == 1 and vols[data[0]["name"]]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"],
             f"{name}: mounts the claim")
        need(data[0]["mountPath"] == "/data", f"{name}: the claim is at /data")
        sc = pod.get("securityContext", {})
        need(sc.get("runAsUser") == IMAGE_USER and sc.get("fsGroup") == IMAGE_USER,
             f"{name}: runs as the image's user {IMAGE_USER} and owns the volume (fsGroup)")
        need(pod["restartPolicy"] == "OnFailure", f"{name}: restarted on failure")
        need(c["command"][0] in IMAGE_COMMANDS, f"{name}: its command is in the image")
    for flag in ("--checkpoint-dir", "--out"):
        need((arg_after(cargs, flag) or "").startswith("/data/"), f"the coordinator's {flag} is on the shared volume")
    scratch = arg_after(wargs, "--scratch")
    wvols = {v["name"]: v for v in pod_of(worker_job)["volumes"]}
    smount = [m for m in worker["volumeMounts"] if m["mountPath"] == scratch]
    need(len(smount) == 1 and "emptyDir" in wvols[smount[0]["name"]], "the workers' --scratch is a node-local emptyDir")

    for c in checks:
        print(f"  ok: {c}")
    print(f"check.py: {len(checks)} consistency checks passed")

    if len(sys.argv) == 6:
        out, lport, puzzle = Path(sys.argv[3]), sys.argv[4], sys.argv[5]
        c_cmd = coord["command"] + cargs
        c_cmd[c_cmd.index(listen)] = f"127.0.0.1:{lport}"
        c_cmd[1] = puzzle  # the first argument of `serve` is the puzzle
        w_cmd = worker["command"] + wargs
        w_cmd[w_cmd.index(url)] = f"http://127.0.0.1:{lport}"
        (out / "coordinator.cmd").write_text("\n".join(c_cmd) + "\n")
        (out / "worker.cmd").write_text("\n".join(w_cmd) + "\n")


if __name__ == "__main__":
    main()
