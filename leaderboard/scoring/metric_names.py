"""Each metric's name as a reader reads it ("COCO AP", not ``coco_ap``; issue 22, P2): board captions, the
metric drop-down of the task form. The slug stays the metric's identifier everywhere else (API, CLI, files).
tests/service/test_web_one_story.py checks that every metric of ``stats.metrics.METRICS`` has one here."""

from __future__ import annotations

DISPLAY_NAMES = {
    "accuracy": "Accuracy",
    "average_precision": "Average precision",
    "balanced_accuracy": "Balanced accuracy",
    "bleu": "BLEU",
    "brier": "Brier score",
    "cer": "Character error rate",
    "chrf": "chrF",
    "chrf++": "chrF++",
    "coco_ap": "COCO AP",
    "coco_ap50": "COCO AP50",
    "coco_ap75": "COCO AP75",
    "coco_ap_large": "COCO AP, large objects",
    "coco_ap_medium": "COCO AP, medium objects",
    "coco_ap_small": "COCO AP, small objects",
    "coco_ar100": "COCO AR@100",
    "cohen_kappa": "Cohen's kappa",
    "log_loss": "Log loss",
    "macro_f1": "Macro F1",
    "mae": "Mean absolute error",
    "mean_class_accuracy": "Mean class accuracy",
    "micro_f1": "Micro F1",
    "miou": "Mean IoU",
    "pixel_accuracy": "Pixel accuracy",
    "r2": "R²",
    "rmse": "Root mean squared error",
    "roc_auc": "ROC AUC",
    "span_f1": "Span F1",
    "ter": "TER",
    "top3_accuracy": "Top-3 accuracy",
    "top5_accuracy": "Top-5 accuracy",
    "voc07_ap50": "PASCAL VOC2007 AP50",
    "voc_ap50": "PASCAL VOC AP50",
    "wer": "Word error rate",
}


def display_name(metric: str) -> str:
    """The metric's name for a reader; an unknown slug as it is, underscores as spaces."""
    return DISPLAY_NAMES.get(metric, metric.replace("_", " "))
