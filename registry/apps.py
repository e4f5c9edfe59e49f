from django.apps import AppConfig


class RegistryConfig(AppConfig):
    """Trained parsers as named, versioned models: what the train job registers and the prefill,
    training and evaluation pages choose from by name, never by a server path. The floor above
    annotator (it reads the roles), below the apps that train, prefill and evaluate."""

    name = "registry"
    verbose_name = "Parser registry"
