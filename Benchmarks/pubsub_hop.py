"""The floor of W2's fire-event path on this machine, with nothing of Chime in it.

A pyzmq PUB sends 300-byte JSON messages at 1,000 a second (each stamped with the send time)
to a SUB in another process, either directly or through ``zmq.proxy`` (XSUB -> XPUB) in a
third process, as Chime's worker -> forwarder -> subscriber path is; the SUB prints the
latency percentiles in milliseconds.

    python3 Benchmarks/pubsub_hop.py direct
    python3 Benchmarks/pubsub_hop.py proxied [--count 10000]

Loopback only; every process it starts is stopped before it returns.
"""

import argparse
import json
import multiprocessing as mp
import time

import zmq


def proxy(ingest, publish):
    context = zmq.Context()
    frontend = context.socket(zmq.XSUB)
    frontend.bind(ingest)
    backend = context.socket(zmq.XPUB)
    backend.bind(publish)
    zmq.proxy(frontend, backend)


def subscribe(endpoint, count, label, ready):
    context = zmq.Context()
    socket = context.socket(zmq.SUB)
    socket.setsockopt(zmq.SUBSCRIBE, b"fire.")
    socket.connect(endpoint)
    ready.set()
    latencies = []
    while len(latencies) < count:
        frames = socket.recv_multipart()
        received = time.time()
        latencies.append((received - json.loads(frames[1])["t"]) * 1000)
    latencies.sort()
    n = len(latencies)
    print(f"{label}: p50 {latencies[n // 2]:.3f} p99 {latencies[int(n * 0.99)]:.3f} max {latencies[-1]:.3f} ms", flush=True)


def publish(socket, count):
    time.sleep(1.5)  # the subscription reaches the publisher
    start = time.time() + 0.1
    for i in range(count):
        due = start + i * 0.001
        while (remaining := due - time.time()) > 0:
            time.sleep(remaining)
        socket.send_multipart([b"fire.x", json.dumps({"t": time.time(), "pad": "x" * 300}).encode()])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["direct", "proxied"])
    parser.add_argument("--count", type=int, default=10000)
    arguments = parser.parse_args()
    context = zmq.Context()
    socket = context.socket(zmq.PUB)
    children = []
    ready = mp.Event()
    if arguments.mode == "direct":
        port = socket.bind_to_random_port("tcp://127.0.0.1")
        target = f"tcp://127.0.0.1:{port}"
    else:
        probe = context.socket(zmq.PUB)
        ingest_port = probe.bind_to_random_port("tcp://127.0.0.1")
        publish_port = probe.bind_to_random_port("tcp://127.0.0.1")
        probe.close(linger=0)
        forwarder = mp.Process(target=proxy, args=(f"tcp://127.0.0.1:{ingest_port}", f"tcp://127.0.0.1:{publish_port}"))
        forwarder.start()
        children.append(forwarder)
        socket.connect(f"tcp://127.0.0.1:{ingest_port}")
        target = f"tcp://127.0.0.1:{publish_port}"
    subscriber = mp.Process(target=subscribe, args=(target, arguments.count, arguments.mode, ready))
    subscriber.start()
    children.append(subscriber)
    try:
        ready.wait(10)
        publish(socket, arguments.count)
        subscriber.join(30)
    finally:
        for child in children:
            if child.is_alive():
                child.terminate()
            child.join(5)


if __name__ == "__main__":
    main()
