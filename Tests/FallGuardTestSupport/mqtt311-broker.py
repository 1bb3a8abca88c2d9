#!/usr/bin/env python3
"""A broker that speaks only MQTT 3.1.1, as one before MQTT 5 did (mosquitto before 1.6):
it answers an MQTT 5 CONNECT with the 3.1.1 refusal "unacceptable protocol version" (CONNACK
0x01, no properties), accepts 3.1.1, acknowledges PUBLISH (QoS 1) and SUBSCRIBE, answers
PINGREQ. Every packet is logged, one line each, to --log: `connect 5`, `connect 4`,
`subscribe <topic>`, `publish <topic> <bytes>`. Debian has no such broker any more, so the
tests of the bridge's fallback use this one; everything else runs against the real mosquitto.
Usage: mqtt311-broker.py --port N --log FILE"""
import argparse, socket, struct, threading

def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data

def read_packet(sock):
    header = read_exact(sock, 1)[0]
    length, shift = 0, 0
    while True:
        b = read_exact(sock, 1)[0]
        length |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return header, read_exact(sock, length)

def serve(conn, log):
    def say(line):
        with open(log, "a") as f:
            f.write(line + "\n")
    try:
        while True:
            header, body = read_packet(conn)
            kind = header >> 4
            if kind == 1:   # CONNECT: protocol name (2-byte length + text), then the level
                name_len = struct.unpack(">H", body[:2])[0]
                level = body[2 + name_len]
                say("connect %d" % level)
                if level != 4:
                    conn.sendall(bytes([0x20, 0x02, 0x00, 0x01]))
                    return
                conn.sendall(bytes([0x20, 0x02, 0x00, 0x00]))
            elif kind == 3:   # PUBLISH
                qos = (header >> 1) & 3
                topic_len = struct.unpack(">H", body[:2])[0]
                topic = body[2:2 + topic_len].decode()
                rest = body[2 + topic_len:]
                if qos:
                    mid, rest = rest[:2], rest[2:]
                    conn.sendall(bytes([0x40, 0x02]) + mid)
                say("publish %s %d" % (topic, len(rest)))
            elif kind == 8:   # SUBSCRIBE
                mid = body[:2]
                topic_len = struct.unpack(">H", body[2:4])[0]
                say("subscribe %s" % body[4:4 + topic_len].decode())
                conn.sendall(bytes([0x90, 0x03]) + mid + bytes([0x01]))
            elif kind == 12:   # PINGREQ
                conn.sendall(bytes([0xD0, 0x00]))
            elif kind == 14:   # DISCONNECT
                return
    except (EOFError, OSError):
        pass
    finally:
        conn.close()

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--log", required=True)
    a = p.parse_args()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", a.port))
    s.listen(8)
    open(a.log, "a").close()
    print("listening", flush=True)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, a.log), daemon=True).start()

if __name__ == "__main__":
    main()
