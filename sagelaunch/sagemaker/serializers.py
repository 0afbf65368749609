"""v2's sagemaker.serializers."""
from sagelaunch.estimators.serializers import (BaseSerializer, CSVSerializer, IdentitySerializer, JSONSerializer,
                                    NumpySerializer, SimpleBaseSerializer)

__all__ = ["BaseSerializer", "SimpleBaseSerializer", "JSONSerializer", "CSVSerializer", "NumpySerializer",
           "IdentitySerializer"]
