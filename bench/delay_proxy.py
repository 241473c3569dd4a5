#!/usr/bin/env python3
"""A TCP proxy that delays every byte by a fixed time each way, without
limiting throughput: a stand-in for a network link between a worker and
its coordinator (this machine has no `tc netem`).

    delay_proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_SECONDS
"""
import asyncio
import sys
import time


async def pipe(reader, writer, delay):
    queue = asyncio.Queue()

    async def read():
        while True:
            data = await reader.read(65536)
            await queue.put((time.monotonic(), data))
            if not data:
                return

    async def write():
        while True:
            arrived, data = await queue.get()
            wait = arrived + delay - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                writer.close()
                return
            writer.write(data)
            await writer.drain()

    await asyncio.gather(read(), write())


async def main(listen_port, host, port, delay):
    async def handle(client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection(host, port)
        await asyncio.gather(
            pipe(client_reader, server_writer, delay),
            pipe(server_reader, client_writer, delay),
            return_exceptions=True,
        )

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
