# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""close() and with blocks for listeners and clients."""

import threading
import time

import pytest

import rdmad


def _listen_again(client, service):
    """The service registered again once rdmad saw the old listener go."""
    deadline = time.monotonic() + 5
    while True:
        try:
            return client.listen(service)
        except rdmad.AlreadyExists:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_closing_a_listener_cancels_its_accept_and_frees_the_name(pair):
    listener = pair.client_b.listen("py.closing")
    with pytest.raises(rdmad.AlreadyExists):
        pair.client_b.listen("py.closing")
    failure = {}

    def accept():
        try:
            listener.accept(timeout=30)
        except rdmad.Error as e:
            failure["error"] = e

    thread = threading.Thread(target=accept)
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    listener.close()
    thread.join()
    assert time.monotonic() - started < 10
    assert isinstance(failure["error"], rdmad.Cancelled)
    with pytest.raises(rdmad.Cancelled):
        listener.accept(timeout=1)
    listener.close()  # again: nothing
    with _listen_again(pair.client_b, "py.closing") as again:
        assert again.service == "py.closing"
    _listen_again(pair.client_b, "py.closing").close()  # the with block closed it


def test_a_closed_client_refuses_calls_and_its_channels_live_on(pair):
    with rdmad.Client.open(socket=pair.a.socket) as client:
        assert client.socket == pair.a.socket
        assert client.status()["pid"] == pair.a.process.pid
        with pair.client_b.listen("py.client") as listener:
            accepted = {}
            thread = threading.Thread(
                target=lambda: accepted.update(ch=listener.accept(timeout=30)))
            thread.start()
            channel = client.connect("B", "py.client")
            thread.join()
        events = client.events()
    for call in (client.status, client.peers, client.channels, client.pools, client.events):
        with pytest.raises(rdmad.FailedPrecondition) as closed:
            call()
        assert closed.value.message == "the client was closed"
    client.close()  # again: nothing
    channel.send(b"still here")
    assert accepted["ch"].recv(timeout=10) == b"still here"
    events.close()  # its stream kept what it reads through
    with pytest.raises(rdmad.Cancelled):
        next(events)
    channel.close()
    accepted["ch"].close()
