"""Labels: the mapping of two label values onto -1/+1, label arrays, class weights.

Labels are numbers, as in SVMlight/LIBSVM files; the scikit-learn estimators
(:mod:`pegasos.sklearn`) map other label types onto indices themselves.
"""

import math
from dataclasses import dataclass

import numpy as np

from .errors import DataError, ExampleError, ParameterError
from .options import fmt_label


def label_values(y, what="label"):
    """Labels or targets as a float64 array.

    Raises
    ------
    ParameterError
        A value that is not a number (a string, None, an object): the
        message names the first such example.
    """
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    flat = np.asarray(y, dtype=object).ravel()
    for i, v in enumerate(flat):
        try:
            float(v)
        except (TypeError, ValueError):
            detail = (f"{what} {v!r} is not a number (pegasos trains on numeric labels; "
                      "pegasos.sklearn's estimators accept any label type)")
            raise ExampleError(f"example {i + 1}: {detail}", i, detail) from None
    raise ParameterError(f"the {what}s must be numbers")


def sample_weights(y, class_weight):
    """Per-example weights (float64, shape (m,)) from {label value: weight}, or None.

    Raises
    ------
    ParameterError
        A weight that is not positive; ExampleError for a label absent from y.
    """
    if not class_weight:
        return None
    sw = np.ones(y.shape[0], dtype=np.float64)
    for label, weight in class_weight.items():
        if not (math.isfinite(weight) and weight > 0):
            raise ParameterError(f"the weight of class {fmt_label(float(label))} must be positive, got {weight}")
        hit = y == float(label)
        if not hit.any():
            raise ExampleError(f"class weight given for label {fmt_label(float(label))}, which is not in the data")
        sw[hit] = weight
    return sw


@dataclass
class BinaryLabels:
    """Mapping of the two label values of a file onto -1/+1.

    The larger value becomes +1 (so -1/+1, 0/1 and 1/2 files all keep the
    usual orientation).  ``negative_text`` / ``positive_text`` keep the
    spelling used in the training file for output.
    """

    negative: float
    positive: float
    negative_text: str = ""
    positive_text: str = ""

    def __post_init__(self):
        self.negative_text = fmt_label(self.negative, self.negative_text)
        self.positive_text = fmt_label(self.positive, self.positive_text)

    @classmethod
    def from_data(cls, data, allow_one_class=False):
        """Build the mapping from an :class:`pegasos.io.SVMLightData`.

        With ``allow_one_class``, a file whose labels are all -1, all 0 or all
        +1 is accepted; the missing class is the other member of the usual
        pair (-1/+1, or 0/1 for 0).

        Raises
        ------
        DataError
            No examples, a single class, or more than two classes (the message
            names the line where each class first appears).
        """
        labels = data.distinct_labels
        if data.n_examples == 0:
            raise DataError(data.path, "no training examples found (the file is empty or holds only "
                                       "comments and blank lines)")
        if not labels:          # an SVMLightData made by hand, or its list emptied
            raise DataError(data.path, f"the data record no distinct labels for their {data.n_examples} examples "
                                       "(read them with pegasos.read_svmlight, or give (X, y))")
        if len(labels) == 1 and allow_one_class and labels[0].value in (-1.0, 0.0, 1.0):
            return cls._with_missing_class(labels[0].value, labels[0].text)
        if len(labels) == 1:
            hint = ("; --allow-one-class accepts only -1, 0 or +1" if allow_one_class
                    else " (--allow-one-class to train anyway)")
            raise DataError(data.path, f"the data contain only one class ({labels[0].text}); "
                                       f"binary training needs examples of two classes{hint}")
        if len(labels) > 2:
            third = labels[2]
            seen = " and ".join(f"{l.text!r} on line {l.line}" for l in labels[:2])
            hint = (" (SVMlight's label 0 marks unlabelled examples for transduction, "
                    "which pegasos does not support; --multiclass ovr treats 0 as a class)") \
                if any(l.value == 0 for l in labels[:3]) else ""
            raise DataError(data.path, f"label {third.text!r} is a third class, after {seen}; "
                                       f"binary training needs exactly two classes{hint}",
                            line=third.line)
        a, b = sorted(labels, key=lambda l: l.value)
        return cls(a.value, b.value, a.text, b.text)

    @classmethod
    def _with_missing_class(cls, value, text=None):
        """The mapping of data whose only label is ``value`` (-1, 0 or +1): the missing class is the
        other member of the usual pair (-1/+1, or 0/1 for 0)."""
        if value == -1.0:
            return cls(-1.0, 1.0, text, "+1")
        if value == 0.0:
            return cls(0.0, 1.0, text, "1")
        return cls(-1.0, 1.0, "-1", text)

    @classmethod
    def from_values(cls, y, allow_one_class=False):
        """Build the mapping from an array of labels (API use); ``allow_one_class`` as :meth:`from_data`."""
        values = np.unique(label_values(y))
        if values.size == 1 and allow_one_class and float(values[0]) in (-1.0, 0.0, 1.0):
            return cls._with_missing_class(float(values[0]))
        if values.size != 2:
            hint = "; allow_one_class accepts a single label of -1, 0 or +1" if allow_one_class and values.size == 1 else ""
            raise ParameterError(f"binary training needs exactly two label values, got {values.size}: "
                                 f"{values[:5].tolist()}{hint}")
        return cls(float(values[0]), float(values[1]))

    def encode(self, y):
        """Map label values to -1.0/+1.0 (float64 array).

        Raises
        ------
        ParameterError
            A value that is neither of the two labels.
        """
        y = label_values(y)
        out = np.where(y == self.positive, 1.0, -1.0)
        bad = (y != self.positive) & (y != self.negative)
        if bad.any():
            i = int(np.argmax(bad))
            detail = (f"label {fmt_label(y[i])} is not one of the model's labels "
                      f"({self.negative_text}, {self.positive_text})")
            raise ExampleError(f"example {i + 1}: {detail}", i, detail)
        return out

    def decode(self, positive_mask):
        """Label texts for a boolean array of positive predictions."""
        return np.where(positive_mask, self.positive_text, self.negative_text)
