-- The support agent's data (seed 003): customers and their orders, with the Blackbird fixture as its
-- rows. The data lives here, in the migration: the app never reads the fixture file at run time.
--
-- These are staff data, not per-user data: every support conversation works on the same customers
-- and orders, whoever the signed-in operator is, so there is deliberately NO row-level security on
-- these two tables (unlike the runtime tables of 001, which are keyed on brigade.user_id).
-- Least privilege is done with grants instead: brigade_app may read both tables and may change only
-- the columns that the tools change (customers.email and customers.phone through update_user_contact,
-- orders.status through cancel_order). No INSERT, no DELETE, no other column.

CREATE TABLE customers (
  id       text PRIMARY KEY CHECK (id ~ '^[0-9]{7}$'),
  name     text NOT NULL CHECK (name <> ''),
  email    text NOT NULL CHECK (email ~ '^[^@[:space:]]+@[^@[:space:]]+$'),
  phone    text NOT NULL CHECK (phone ~ '^[0-9]{3}-[0-9]{3}-[0-9]{4}$'),
  username text NOT NULL UNIQUE CHECK (username <> '')
);
-- Email is unique whatever its case: John@Gmail.com and john@gmail.com are one address.
-- update_user_contact maps a violation of this index (a concurrent writer) to its "in use" result.
CREATE UNIQUE INDEX customers_email_lower_key ON customers (lower(email));
CREATE INDEX customers_phone ON customers (phone);

CREATE TABLE orders (
  id          text PRIMARY KEY CHECK (id ~ '^[0-9]{5}$'),
  customer_id text NOT NULL REFERENCES customers (id),
  product     text NOT NULL CHECK (product <> ''),
  quantity    integer NOT NULL CHECK (quantity > 0),
  price       numeric(10, 2) NOT NULL CHECK (price >= 0),
  status      text NOT NULL CHECK (status IN ('Processing', 'Shipped', 'Delivered', 'Cancelled'))
);
CREATE INDEX orders_customer ON orders (customer_id, id);

-- Every row of the fixture (shared/fixtures/blackbird-customers-orders.json), as it is.
INSERT INTO customers (id, name, email, phone, username) VALUES
  ('1213210', 'John Doe', 'john@gmail.com', '123-456-7890', 'johndoe'),
  ('2837622', 'Priya Patel', 'priya@candy.com', '987-654-3210', 'priya123'),
  ('3924156', 'Liam Nguyen', 'lnguyen@yahoo.com', '555-123-4567', 'liamn'),
  ('4782901', 'Aaliyah Davis', 'aaliyahd@hotmail.com', '111-222-3333', 'adavis'),
  ('5190753', 'Hiroshi Nakamura', 'hiroshi@gmail.com', '444-555-6666', 'hiroshin'),
  ('6824095', 'Fatima Ahmed', 'fatimaa@outlook.com', '777-888-9999', 'fatimaahmed'),
  ('7135680', 'Alejandro Rodriguez', 'arodriguez@protonmail.com', '222-333-4444', 'alexr'),
  ('8259147', 'Megan Anderson', 'megana@gmail.com', '666-777-8888', 'manderson'),
  ('9603481', 'Kwame Osei', 'kwameo@yahoo.com', '999-000-1111', 'kwameo'),
  ('1057426', 'Mei Lin', 'meilin@gmail.com', '333-444-5555', 'mlin');

INSERT INTO orders (id, customer_id, product, quantity, price, status) VALUES
  ('24601', '1213210', 'Wireless Headphones', 1, 79.99, 'Shipped'),
  ('13579', '1213210', 'Smartphone Case', 2, 19.99, 'Processing'),
  ('97531', '2837622', 'Bluetooth Speaker', 1, 49.99, 'Shipped'),
  ('86420', '3924156', 'Fitness Tracker', 1, 129.99, 'Delivered'),
  ('54321', '4782901', 'Laptop Sleeve', 3, 24.99, 'Shipped'),
  ('19283', '5190753', 'Wireless Mouse', 1, 34.99, 'Processing'),
  ('74651', '6824095', 'Gaming Keyboard', 1, 89.99, 'Delivered'),
  ('30298', '7135680', 'Portable Charger', 2, 29.99, 'Shipped'),
  ('47652', '8259147', 'Smartwatch', 1, 199.99, 'Processing'),
  ('61984', '9603481', 'Noise-Cancelling Headphones', 1, 149.99, 'Shipped'),
  ('58243', '1057426', 'Wireless Earbuds', 2, 99.99, 'Delivered'),
  ('90357', '1213210', 'Smartphone Case', 1, 19.99, 'Shipped'),
  ('28164', '2837622', 'Wireless Headphones', 2, 79.99, 'Processing');

GRANT SELECT ON customers, orders TO brigade_app;
GRANT UPDATE (email, phone) ON customers TO brigade_app;
GRANT UPDATE (status) ON orders TO brigade_app;
