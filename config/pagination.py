"""The API's pages: DRF's page numbers, from 1, as the schema says."""

from __future__ import annotations

from typing import Any

from rest_framework import pagination
from rest_framework.exceptions import NotFound


class PageNumberPagination(pagination.PageNumberPagination):
    """DRF reads an empty ``page=`` as the first page, where the schema promises an integer from 1:
    it is refused like any page that is not one (404, DRF's answer to ``page=abc``)."""

    def get_page_number(self, request, paginator) -> Any:
        if request.query_params.get(self.page_query_param) == "":
            raise NotFound(self.invalid_page_message.format(page_number="", message="no page number"))
        return super().get_page_number(request, paginator)

    def get_schema_operation_parameters(self, view) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"] = {**parameter["schema"], "minimum": 1}
        return parameters
