from review.views.explorer import explorer

__all__ = ["explorer"]
