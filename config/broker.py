"""kombu's filesystem transport (the embedded broker of `make run` and the tests), writing each
message whole before a worker can see it.

kombu's own ``_put`` creates the message file and writes it afterwards, and its ``_get`` moves
any file of the queue away without the writer's lock: a worker polling in between (every 0.25 s
here) read an empty file, raised JSONDecodeError from its event loop and died, and the message
went with it (a CI run's worker, tests/browser/test_team_day.py). Here the message is written
under a name the reader skips and renamed into the queue, which is atomic on one file system."""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

#: the suffix of a message still being written: ``_get`` takes only names ending ``.<queue>.msg``
PARTIAL = ".part"


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"  # kombu's name, so its order
        final = os.path.join(self.data_folder_out, name)
        try:
            with open(final + PARTIAL, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(final + PARTIAL, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
