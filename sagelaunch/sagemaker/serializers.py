"""v2's sagemaker.serializers."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.serializers import (BaseSerializer, CSVSerializer, IdentitySerializer, JSONSerializer,
                                    NumpySerializer, SimpleBaseSerializer)

__all__ = ["BaseSerializer", "SimpleBaseSerializer", "JSONSerializer", "CSVSerializer", "NumpySerializer",
           "IdentitySerializer"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
