"""The discussion's template filter: a comment's text as HTML (escaped, mentions marked, lines kept)."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from discussion.models import Comment
from discussion.text import body_html

register = template.Library()


@register.filter
def comment_html(comment: Comment) -> SafeString:
    return body_html(comment.body, comment.mentions)
