from pricing import apply_discount, shipping, subtotal, total

BASKET = [("notebook", 2, 12.50), ("pen", 4, 1.25)]


def test_subtotal_multiplies_quantity_by_price():
    assert subtotal(BASKET) == 30.0


def test_discount_is_a_percentage():
    assert apply_discount(80.0, 25) == 60.0


def test_discount_never_goes_below_zero():
    assert apply_discount(20.0, 150) == 0.0


def test_shipping_is_free_from_fifty():
    assert shipping(50.0) == 0.0
    assert shipping(49.99) == 4.95


def test_total_of_a_small_order_pays_shipping():
    assert total(BASKET) == 34.95


def test_total_with_a_discount():
    assert total([("lamp", 1, 80.0)], discount_percent=25) == 60.0
