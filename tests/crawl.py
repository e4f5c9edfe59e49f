"""Follow a site's internal links as one user: which pages answer what, and which links lead a
reader to a page that refuses them."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

# Followed for their status only, never crawled: the Django admin and the API browser are not ours.
NOT_CRAWLED = ("/admin/", "/api/")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def links(html: str, base: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    out = []
    for href in parser.hrefs:
        url = urldefrag(urljoin(base, href)).url
        parts = urlsplit(url)
        if parts.scheme in ("", "http") and parts.netloc in ("", "testserver"):
            out.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return out


def crawl(
    client, seeds: list[str], *, area: tuple[str, ...], pages: dict[str, str] | None = None
) -> tuple[dict[str, int], list[tuple[str, str, int]]]:
    """Open the seeds and every page under ``area`` they link to (recursively), check the status
    of every other internal link once, and return each URL's status and every (page, link, status)
    where the link answered 403. ``pages``, if given, receives each crawled page's HTML by URL."""
    status: dict[str, int] = {}
    edges: list[tuple[str, str]] = []
    queue = list(seeds)
    while queue:
        url = queue.pop(0)
        if url in status:
            continue
        response = client.get(url)
        status[url] = response.status_code
        path = urlsplit(url).path
        html = "text/html" in response.get("Content-Type", "")
        if response.status_code != 200 or not html or path.startswith(NOT_CRAWLED):
            continue
        if path.startswith(area) or url in seeds:
            if pages is not None:
                pages[url] = response.content.decode()
            for link in links(response.content.decode(), url):
                edges.append((url, link))
                link_path = urlsplit(link).path
                if link_path.startswith(area) and not link_path.startswith(NOT_CRAWLED):
                    queue.append(link)
                elif link not in status:
                    status[link] = client.get(link).status_code
    refused = [(page, link, status[link]) for page, link in edges if status[link] == 403]
    return status, refused
