"""The registry's API: GET /api/parsers/ (filter by name or backend) and GET /api/parsers/{id}/."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated

from annotator.roles import ADJUDICATOR, ADMIN, HasRole
from registry.filters import ParserFilter
from registry.models import RegisteredParser
from registry.selectors import best_parser

IsAdjudicatorOrAdmin = HasRole(
    ADJUDICATOR, ADMIN, message=_("the parser registry is for adjudicators and admins")
)


class ParserOut(serializers.ModelSerializer):
    spec = serializers.CharField(read_only=True, help_text="NAME@VERSION: what a prefill job takes as model")
    parser_name = serializers.CharField(read_only=True, help_text="the name its predictions carry")
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)
    trained_on = serializers.IntegerField(
        source="trained_count", read_only=True, help_text="how many corpus items trained it"
    )
    validation_accuracy = serializers.FloatField(
        read_only=True,
        allow_null=True,
        help_text="routed accuracy on labelled texts held back from its training; null: none held back",
    )
    best = serializers.SerializerMethodField(
        help_text="whether it is the best registered parser: the one a prefill with no parser chosen uses, "
        "unless the settings name a classifier (NSM_PARSER_BACKEND=classifier, NSM_PARSER_MODEL)",
    )

    class Meta:
        model = RegisteredParser
        fields = ["id", "name", "version", "spec", "backend", "parser_name", "description", "job_id",
                  "trained_on", "validation_accuracy", "validation_texts", "best", "created_by",
                  "created_at"]  # fmt: skip

    def get_best(self, obj: RegisteredParser) -> bool:
        if "best" not in self.context:
            found = best_parser()
            self.context["best"] = found.pk if found else None
        return obj.pk == self.context["best"]


class ParserDetailOut(ParserOut):
    class Meta(ParserOut.Meta):
        fields = [*ParserOut.Meta.fields, "card"]


class ParserList(generics.ListAPIView):
    """Registered parsers, newest version first within each name; ?name=NAME or NAME@VERSION,
    ?backend=."""

    serializer_class = ParserOut
    permission_classes = [IsAuthenticated & IsAdjudicatorOrAdmin]
    filterset_class = ParserFilter
    queryset = RegisteredParser.objects.select_related("created_by").defer("card", "trained_on")


class ParserDetail(generics.RetrieveAPIView):
    """One registered parser with its whole card (training data, options, sources)."""

    serializer_class = ParserDetailOut
    permission_classes = [IsAuthenticated & IsAdjudicatorOrAdmin]
    queryset = RegisteredParser.objects.select_related("created_by")
