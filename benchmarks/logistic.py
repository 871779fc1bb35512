"""The logistic regression every fit of ``benchmarks/`` uses: weighted, L2-regularised, on
standardised features (:func:`fit_logistic`), and its linear score (:func:`predict`)."""

from __future__ import annotations

from typing import Any


def fit_logistic(x: Any, y: Any, w: Any, c: float) -> tuple[Any, Any, Any, float]:
    """Weighted L2 logistic regression on standardised ``x``: (mean, scale, weights, bias)."""
    import numpy as np
    from scipy.optimize import minimize

    x = np.where(np.isnan(x), np.nanmean(x, axis=0), x)  # unknown (no history): the mean
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    total = w.sum()

    def loss(theta: Any) -> tuple[float, Any]:
        beta, bias = theta[:-1], theta[-1]
        margin = z @ beta + bias
        p = 1.0 / (1.0 + np.exp(-np.clip(margin, -30, 30)))
        eps = 1e-12
        value = -(w * (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))).sum() / total
        value += 0.5 / (c * total) * (beta @ beta) * 1.0
        grad_margin = w * (p - y) / total
        grad = np.concatenate([z.T @ grad_margin + beta / (c * total), [grad_margin.sum()]])
        return value, grad

    theta0 = np.zeros(z.shape[1] + 1)
    result = minimize(loss, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    return mean, scale, result.x[:-1], float(result.x[-1])


def predict(model: tuple[Any, Any, Any, float], x: Any) -> Any:
    mean, scale, beta, bias = model
    return ((x - mean) / scale) @ beta + bias
