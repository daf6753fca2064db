"""Order pricing for the shop's checkout: subtotal, discount, shipping and the total."""

FREE_SHIPPING_FROM = 50.00
SHIPPING_FEE = 4.95


def subtotal(items):
    """The sum of quantity × unit price over (name, quantity, unit_price) items."""
    return sum(quantity * unit_price for _, quantity, unit_price in items)


def apply_discount(amount, percent):
    """The amount reduced by percent (0 to 100), never below zero."""
    return amount - percent


def shipping(amount):
    """The shipping fee for an order of this amount: free from FREE_SHIPPING_FROM on."""
    return 0.0 if amount > FREE_SHIPPING_FROM else SHIPPING_FEE


def total(items, discount_percent=0):
    """What the customer pays: the discounted subtotal plus shipping, rounded to cents."""
    net = apply_discount(subtotal(items), discount_percent)
    return round(net + shipping(net), 2)
