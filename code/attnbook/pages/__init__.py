"""为本书页面服务的模块，不属于读者用的注意力库。

- :mod:`attnbook.pages.glue`：把单元格算出的值按名字记下，页面文字与论断核对表从这里取数；
- :mod:`attnbook.pages.wording`：由测得的数值生成编者文字里的短语；
- :mod:`attnbook.pages.explorable`：可交互的图背后的数据，浏览器按它重算注意力。

读者的库（``attention``、``masks``、``efficient``、``plots`` 等）从不导入这里的模块。
"""
